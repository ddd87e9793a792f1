"""Every sentence hitl-bot shows a person, in one place so wording stays consistent."""

from __future__ import annotations

from datetime import UTC, datetime


def when(ms: int | None) -> str:
    """Epoch milliseconds as a time a person reads in a log or a terminal (UTC)."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def plural(n: int, one: str, many: str | None = None) -> str:
    """`one` for 1, else `many` (default: `one` + "s"): "1 run", "2 runs"."""
    return one if n == 1 else (many if many is not None else one + "s")


ALREADY_RESOLVED = "Already {how} by {by} ({at}); nothing changed."
EXPIRED = "This request expired ({at}); the policy default decides now: {default}."
STALE_PAYLOAD = (
    "The call changed after you looked at it (you saw {seen}, it is now {current}). "
    "Open the latest message and decide again."
)
NOT_ELIGIBLE = "{actor} may not decide this request: {why}."
WHY_REQUESTER = (
    "it was asked for by you (or for you), and nobody approves their own action; "
    "who may decide: {approvers}"
)
WHY_NOT_APPROVER = "not among its approvers ({approvers})"
REASON_REQUIRED = "A rejection needs a reason code, one of: {codes}."
EDIT_NOT_ALLOWED = "The policy does not allow editing {tool} before approval."
EDIT_NEEDS_ARGS = "Edit and approve needs the new arguments."
NOT_ALLOWED = "Cannot {event} a request that is {state}."
UNKNOWN_REQUEST = "No request with id {id}."
TERMS_DAMAGED = (
    "The review terms of request {id} are missing from the store or differ from those it "
    "was created under, so who may approve it is unknown: nothing was changed. An operator "
    "must restore the store's `terms` keys from a backup."
)
IDEMPOTENCY_TAKEN = "Idempotency key {key} cannot be used; use a new key for a new call."
UNKNOWN_QUESTION = "No question with id {id}."
IDEMPOTENCY_CONFLICT = (
    "Idempotency key {key} was already used for a different call, asker or risk "
    "(hash {existing}); use a new key for a new call."
)
QUESTION_CLOSED = "This question is {state}; it no longer takes answers."
BAD_BUTTON = "This button does not belong to a request I know; open the latest message."
REASON_REQUIRED_SHORT = "Pick a reason code."
EDIT_BAD_JSON = "Not valid JSON: {error}"
ANSWER_EMPTY = "Write an answer first."
HITL_USAGE = (
    "Usage: /hitl pending | policy | run <agent> <prompt> | steer <run> <text> | "
    "stop <run> | audit <request>"
)
STEER_QUEUED = "Queued for {run_id}; the agent reads it at its next tool call."
STOP_DONE = "Stopping {run_id}: pending requests and questions are withdrawn."
RUN_STARTED = "Started {run_id} with the {agent} agent."

# -- Slack rendering (bot/slack/render.py, views.py, escape.py) ------------------------
# Placeholders are filled with text that is already escaped for mrkdwn. A date ({at})
# renders as "Today at 9:00 AM" (Slack capitalises a "pretty" day that opens the date),
# so sentences set it apart ("· {at}", "({at})") instead of writing "at {at}".

RISK_EMOJI = {
    "low": ":large_green_circle:",
    "medium": ":large_yellow_circle:",
    "high": ":large_orange_circle:",
    "critical": ":red_circle:",
}
STATE_LABELS = {
    "pending_review": "⏳ Waiting for review",
    "approved": "✅ Approved",
    "auto_approved": "✅ Approved by the policy default",
    "executing": "▶️ Executing",
    "completed": "✔️ Completed",
    "rejected": "⛔ Rejected",
    "cancelled": "🚫 Cancelled",
    "escalated": "⏫ Escalated",
    "auto_rejected": "⌛ Auto-rejected: nobody answered",
    "failed": "⚠️ Failed",
    "rollback_pending": "↩️ Rolling back",
    "rolled_back": "↩️ Rolled back",
    "manual_intervention": "🆘 Manual intervention needed",
}
RUN_LABELS = {
    "queued": "⏳ Queued",
    "running": "🏃 Running",
    "waiting": "✋ Waiting for a person",
    "finished": "🏁 Finished",
    "stopped": "🛑 Stopped",
    "failed": "💥 Failed",
    "turn_limit": "🔁 Stopped at the turn limit",
}
REASON_LABELS = {
    "wrong_target": "Wrong target",
    "too_risky": "Too risky",
    "needs_info": "Needs more information",
    "policy": "Against policy",
    "other": "Other",
}
DEADLINE_LABELS = {
    "pending_review": "Decide by",
    "approved": "Must start by",
    "auto_approved": "Must start by",
    "executing": "Must report by",
    "rollback_pending": "Rollback must report by",
}
RESOLUTION = {
    "approve": "✅ Approved by {who} · {at}",
    "edit_and_approve": "✏️ Edited and approved by {who} · {at}",
    "reject": "⛔ Rejected by {who} · {at}",
    "timeout": "⌛ Nobody decided in time; the policy default applied · {at}",
    "cancel": "🚫 Withdrawn by {who} · {at}",
}
RESOLUTION_OTHER = "{event} by {who} · {at}"

HEAD_PENDING = "{risk} risk — approval needed"
HEAD_STATE = "{risk} risk — {state}"
HEAD_ESCALATED = "⏫ Escalated: {risk} risk — approval needed"
CALL_INTRO = "The agent wants to call {tool} with these arguments:"
ARG_CUT_MARK = " … ✂ cut: {size:,} characters in all"  # inside the code, after the cut value
ARG_CUT_LABEL = "{name} ({size:,} characters)"
ARGS_CUT_NOTE = "✂ Cut to fit in Slack: {names}. *{view}* shows every argument in full."
ARGS_NAMES_ONLY = (
    "*{n:,} arguments*: too many to show their values here; *{view}* shows them in full. "
    "Their names and sizes:"
)
HIDDEN_CHARS_WARNING = (
    "⚠️ *Hidden characters.* This request contains invisible or direction-changing "
    "characters (bidi controls, zero-width or other control characters). They are spelled "
    "out as codes such as `\\u202e`, so read it exactly as shown here."
)
ARGS_UNREADABLE = (
    "(the arguments are nested too deeply to display; reject the call, "
    "or inspect it with hitl-bot show)"
)
ARGS_CUT_MODAL = (
    "… the arguments go on beyond what Slack can show; `hitl-bot show {id}` prints them all."
)
TEXT_CUT = "… cut here: the rest is too long for Slack"
BLOCKS_CUT = "… more than fits in one message"
EMPTY_VALUE = "empty"
AND_MORE = "and {n} more"
N_OF = "{n} of {total}"
ANYONE_ELIGIBLE = "anyone"
NOBODY = "nobody yet (it escalates when its deadline passes)"
LEVEL_PAGER = ":pager: pager"
LEVEL_ONCALL = "on-call {name}"
LEVEL_CURRENT = "← now"
DEADLINE_PASSED = "(passed)"
F_DETAILS = "Details"
F_RUN = "Run"
F_REQUEST = "request"
F_REQUEST_ID = "Request"
F_REQUESTER = "Requested by"
F_ON_BEHALF_OF = "On behalf of"
F_HASH = "Payload hash"
F_FULL_HASH = "Payload hash (sha256)"
F_EDITED_FROM = "Edited from hash"
F_ORIGINAL_HASH = "Original hash, before the edit"
F_LEVEL = "Escalation level"
F_WAITING = "Waiting for"
F_APPROVALS = "Approvals"
F_APPROVERS = "May decide"
F_CREATED = "Created"
F_RISK = "Risk"
F_STATE = "State"
F_CHAIN_FULL = "Escalation chain"
F_ARGUMENTS = "Arguments"
F_OUTCOME = "Outcome:"
F_REASON = "Reason:"
F_REPORT = "Executor report:"
BTN_APPROVE = "Approve"
BTN_REJECT = "Reject"
BTN_EDIT = "Edit and approve"
BTN_VIEW = "View full payload"
BTN_BACK = "Go back"
BTN_ANSWER = "Answer"
CONFIRM_TITLE = "Approve this {risk} risk call?"
CONFIRM_TEXT = "{tool}: {details}. It runs exactly as shown once the required approvals are in."
ESCALATION_INTRO = (
    "{who}: nobody decided this in time at the previous level, so it now waits for you "
    "(level {level} of {total}). Request {id}."
)
ESCALATION_FALLBACK = "⏫ Escalated:"
REQUEST_FOOT = "Request {id} · {at} · history: /hitl audit {id}"
FALLBACK_PENDING = "{risk} risk approval needed: {tool} (request {id})"
FALLBACK_STATE = "{state}: {tool} (request {id})"

SL_NO_REVIEW = "⏩ Ran without review, by policy: {item}"
SL_NO_REVIEW_MANY = "⏩ {n} calls ran without review, by policy:"
SL_FREE_ITEM = "{call} ({risk} risk)"
# A run's thread, when its call's card is in the tier's review channel instead.
SL_CARD_ELSEWHERE = "{tool} ({risk}) waits for review in <#{channel}>{link}."
SL_CARD_LINK = ": <{url}|the card>"
SL_CREATED = "📝 Approval requested for {tool} ({risk} risk); waiting for {who}"
SL_APPROVED = "✅ Approved by {who} ({n} of {total})"
SL_APPROVAL_PARTIAL = "👍 Approved by {who} ({n} of {total}); {left} more needed"
SL_EDITED = "✏️ Edited and approved by {who} ({n} of {total}); new payload hash {hash}"
SL_REJECTED = "⛔ Rejected by {who}: {code}{text}"
SL_ESCALATED = "⏫ Escalated to level {level}: {who}"
SL_EXHAUSTED = "⌛ Nobody answered; policy default: {state}"
SL_NOT_CLAIMED = "⌛ Approved but never started in time; cancelled so it cannot run late"
SL_CANCELLED = "🚫 Cancelled by {who}{text}"
SL_NO_REPORT = "no report from the executor"
STATUS_LINES = {
    "approved": "✅ Approved",
    "executing": "▶️ Executing",
    "completed": "✔️ Completed",
    "rolled_back": "↩️ Rolled back",
}
FAILURE_LINES = {  # each with the executor's report
    "failed": "⚠️ Failed: {detail}",
    "rollback_pending": "⚠️ Failed: {detail}; rolling back",
    "manual_intervention": "🆘 Manual intervention needed: {detail}",
}

REFUSAL_PREFIX = {
    "already_resolved": ":information_source:",
    "expired": "⌛",
    "not_eligible": "🚫",
    "stale_payload": "🔄",
    "invalid": "⚠️",
    "question_closed": ":information_source:",
}
REFUSAL_YOU = "You"
REFUSAL_DEFAULTS = {
    "already_resolved": "Someone already decided this request; nothing changed.",
    "expired": "This request expired; the policy default decides now.",
    "not_eligible": "You may not decide this request.",
    "stale_payload": (
        "The call changed after you looked at it; open the latest message and decide again."
    ),
    "invalid": "That did not go through; nothing changed.",
    "question_closed": "This question no longer takes answers.",
}

Q_HEAD = ":question: *The agent asks*"
Q_RUN = " (run {run})"
Q_DUE = "Deadline: {at}."
Q_ANSWERED = "💬 *Answered by* {who} · {at}:"
Q_CLOSED = {
    "expired": "⌛ Nobody answered in time ({at}); the question is closed.",
    "cancelled": "🚫 The run was stopped; the question is closed.",
    "open": "The question is open until: {at}.",
    "answered": "The question was answered.",
}
Q_FOOT = "Question {id}"
Q_FALLBACK = "❓ The agent asks: {question}"
Q_FALLBACK_ANSWERED = "💬 {who} answered: {answer}"

RUN_HEAD = "🤖 {agent} — agent run"
RUN_STEER_HINT = (
    "Reply in this thread to steer the agent: it reads your correction before its next tool call."
)
RUN_FALLBACK = "{state} · {agent} run {id}"
F_PROMPT = "Prompt"
F_TURNS = "Turns"
F_WAITING_ON = "Waiting on"
F_RESULT = "Result"
F_ERROR = "Error"

PENDING_HEAD = "⏳ Pending approvals: {n}"
HOME_PENDING_HEAD = "⏳ Waiting for you: {n}"
PENDING_NONE = "Nothing is waiting for a person right now."
PENDING_LINE = "Level {level} · waiting for {who} · approvals {approvals}"
PENDING_LEFT = "in {d}"
PENDING_OVERDUE = "overdue by {d}"

POLICY_HEAD = "📜 Approval policy"
POLICY_REVIEW = "review within {d}"
POLICY_APPROVALS = (
    "{n} {approvals} from {who}, and each escalation level's people once reached · "
    "self-approval: {self} · edit before approval: {edit}"
)
POLICY_YES_NO = {True: "yes", False: "no"}
POLICY_NO_REVIEW = "no review"
POLICY_FOOT = (
    "Tools not listed run at {default} risk · an approved call must start within {claim} "
    "and report within {execution}"
)
POLICY_FALLBACK = "Approval policy: review within {tiers}; {tools} tool(s) listed"
F_CHAIN = "Chain:"
F_EXHAUSTED = "When nobody answers:"
F_TOOLS = "Tools"

AUDIT_HEAD = "🧾 Audit trail: {n} entries"
AUDIT_EMPTY = "No audit entries."
AUDIT_CUT = "… more entries than fit here; `hitl-bot audit export` has them all"
AUDIT_REFUSED = "✋ refused"

MODAL_CANCEL = "Cancel"
MODAL_CLOSE = "Close"
NOT_PENDING = "This request is no longer waiting for review ({state}); there is nothing to decide."
REJECT_TITLE = "Reject request"
# Slack draws every modal's submit button green, and gives apps no way to colour it:
# the label says what the green button sends.
REJECT_SUBMIT = "Send rejection"
REJECT_INTRO = "You are rejecting {tool} (request {id}, hash {hash}). The agent is told why."
REJECT_REASON_LABEL = "Reason"
REJECT_REASON_PLACEHOLDER = "Choose a reason"
REJECT_TEXT_LABEL = "Tell the agent more"  # Slack adds "(optional)" itself
REJECT_TEXT_HINT = "The agent reads this and may propose a corrected call."
EDIT_TITLE = "Edit and approve"
EDIT_SUBMIT = "Approve edited"
EDIT_INTRO = (
    "Change the arguments of {tool}, then approve the edited call in one step. "
    "The audit keeps the original payload hash {hash} and the new one."
)
EDIT_LABEL = "Arguments (JSON)"
EDIT_HINT = "A JSON object; it is checked against the tool's schema when you submit."
EDIT_QUORUM = (
    "Earlier approvals were for the original call and lapse: the edited call needs "
    "{quorum} approvals, and yours counts as one."
)
EDIT_TOO_LARGE = (
    "These arguments are {size} characters as JSON and Slack's text box holds {limit}, "
    "so editing here would lose part of them. Approve or reject the call as it is, "
    "or reject it and ask the agent for a corrected call."
)
EDIT_ERROR = ":warning: {error}"
PAYLOAD_TITLE = "Full payload"
ANSWER_TITLE = "Answer the agent"
ANSWER_SUBMIT = "Send answer"
ANSWER_LABEL = "Your answer"
SLACK_UNSIGNED = "The request is not signed with this app's signing secret."
SLACK_BAD_BODY = "The Slack request body is not valid JSON (nor a form with a JSON payload)."
REASON_TOO_LONG = "At most {limit} characters."
SLACK_NOT_UTF8 = "The Slack request body is not UTF-8."
SLACK_TOO_DEEP = "The Slack request body nests deeper than {limit} levels."
SLACK_BAD_PAYLOAD = "Not a Slack payload this app can read: {problem}."
ARGS_TOO_DEEP = "tool arguments nest deeper than {limit} levels"
TEXT_LONE_SURROGATE = (
    "text holds a lone UTF-16 surrogate (such as \\ud800), which UTF-8 cannot carry"
)
SLACK_NEEDS_SECRET = (
    "A Slack endpoint without a signing secret would accept forged requests; "
    "set SLACK_SIGNING_SECRET or use Socket Mode (SLACK_APP_TOKEN)."
)
SOCKET_MODE_DOWN = "Slack Socket Mode is not connected: {reason}"
TASK_DOWN = "background task {task} failing for {seconds} s ({failures} failures; see the log)"
REDIS_DOWN = "Redis/Valkey does not answer (see the log)"
TASK_ENDED = "the task returned before it was asked to stop"
SERVE_READY_HTTP = "hitl-bot serving on {url}; Slack events over HTTP at {url}/slack/events"
SERVE_READY_SOCKET = (
    "hitl-bot serving on {url}; Slack events over Socket Mode from {api} (no HTTP Slack endpoint)"
)
CHANNEL_NOT_ALLOWED = (
    "{channel} is not where the policy reviews {what} ({allowed}); the policy alone "
    "decides where a request is reviewed. Fix: leave channel out."
)
REQUESTER_FROM_TOKEN = (
    "requester {given!r} is not this API token's identity ({identity}); the requester comes "
    "from the credential. Fix: leave requester out, name the person you act for in "
    "on_behalf_of, or give this agent its own token in HITL_API_TOKENS."
)

# -- checking edited arguments (bot/core/schema.py) -------------------------------------
# Shown in the Edit modal under the text box, so each stays short (Slack cuts at 150).
ARGS_NOT_OBJECT = "The arguments must be a JSON object, like {example}."
ARGS_SCHEMA_PROBLEM = "{where}: {problem}"
ARGS_ROOT = "arguments"
ARGS_NEW_KEYS = "Not an argument of this call: {names}. Only edit the values."
ARGS_MISSING_KEYS = "Missing arguments: {names}. Keep every argument; edit its value."
ARGS_SCHEMA_BROKEN = "This tool's argument schema cannot be applied ({error}); nothing was changed."
SCHEMA_INVALID = "args_schema is not a valid JSON Schema: {error}"
SCHEMA_TOO_LARGE = "args_schema is {size} bytes as JSON; the limit is {limit}."
SCHEMA_NOT_OBJECT_TYPE = 'args_schema must describe a JSON object (its "type" is "object").'
SCHEMA_TOO_DEEP = "args_schema nests deeper than {limit} levels; the limit is {limit}."
SCHEMA_TOO_MANY_KEYWORDS = "args_schema holds more than {limit} keywords; the limit is {limit}."
SCHEMA_TOO_COSTLY = (
    "checking args_schema against its draft takes more than {limit} steps; the limit is {limit}."
)
SCHEMA_TOO_MANY_PATTERNS = (
    "args_schema holds more than {limit} distinct patterns (pattern and patternProperties); "
    "the limit is {limit}."
)
SCHEMA_PATTERN = (
    "args_schema{where} cannot be run by RE2 ({error}). Every pattern here is matched by "
    "RE2, in linear time: it has no backreferences and no lookaround, and a pattern may "
    "compile to {limit} KiB at most."
)
SCHEMA_UNEVALUATED_PATTERNS = (
    "args_schema{where}: unevaluatedProperties cannot be combined with patternProperties "
    "here (they would be matched by a backtracking engine); use additionalProperties."
)
SCHEMA_HELD_BY_WORKER = (
    "The schema of {tool} for {requester} is registered by the worker that runs the tool; "
    "it cannot be replaced with another one over the API."
)
ARGS_TOO_COSTLY = (
    "checking them against the schema takes more than {limit} steps, the limit; "
    "send a simpler schema or smaller arguments"
)
EDIT_GONE = "This request no longer exists; nothing was changed."
ARGS_DO_NOT_FIT = "The arguments of {tool} do not fit its args_schema: {problems}"
MAY_NOT_DIRECT = (
    "Only the person who started run {run_id}, the people who may decide what it waits "
    "on, and the policy's operators may steer or stop it. Nothing was changed; the "
    "attempt is in the run's audit."
)
MAY_NOT_READ = (
    "Only the requester of {id}, the people who may decide it, and the policy's "
    "operators may read its audit trail."
)
REPLY_AMBIGUOUS = (
    "{n} requests wait for a decision in this thread, so a reply cannot say which one: "
    "use the buttons on the card you mean."
)

# -- the operator's CLI (bot/cli/main.py, bot/cli/runs.py) ----------------------------------
CLI_NO_RUNS = "No runs in the store."
CLI_RUN_HEAD = "{id}  {agent} agent  state={state}  turns={turns}"
CLI_RUN_WHO = "started by {who} at {at}"
CLI_RUN_PROMPT = "prompt: {prompt}"
CLI_RUN_WAITING = "waiting on: {id}  (hitl-bot show {id})"
CLI_RUN_END = "{what}: {text}"
CLI_RUN_THREAD = "thread: {where}"
CLI_RUN_NO_THREAD = "none (started through the API)"
CLI_RUN_REQUESTS = "{n} approval {word}:"
CLI_RUN_REQUEST = "  {id}  {tool}  {risk} risk  {state}"
CLI_RUN_STEERING = "steering: {n} from people, {queued} not read by the agent yet"
CLI_RUN_STEER = "{who} ({how}): {text}"
CLI_RUN_REFUSED = "{who} may not {what}: refused"

# bot/store/hub.py
WAIT_CLOSED = "This process closed its Redis connection while a wait was held; wait again."
UVLOOP_MISSING = (
    "HITL_UVLOOP is set but uvloop is not installed; fix: pip install 'hitl-bot[uvloop]', "
    "or unset HITL_UVLOOP to run on asyncio's own loop"
)
