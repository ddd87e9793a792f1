"""Everything the Slack side says to a person: cards, thread lines, modals, lists, and
the ephemerals that tell whoever replied, clicked or looked what became of it and why.

Each is a `str.format` template filled by keyword (tests/test_messages.py checks every
use). Placeholders are filled with text already escaped for mrkdwn. A date ({at})
renders as "Today at 9:00 AM" (Slack capitalises a "pretty" day that opens the date),
so sentences set it apart ("· {at}", "({at})") instead of writing "at {at}".
"""

from __future__ import annotations

# -- thread replies (bot/slack/listeners/threads.py, bot/slack/listeners/replies.py) ---------------
CARD_MAY_NOT_ANSWER = (
    "You may not answer this question: its run's deciders and operators may, or, for a "
    "question of no run, people of this workspace. Your reply was not sent to the agent."
)
MAY_NOT_ANSWER = (
    "Run {run_id} is waiting for an answer to its question, and only the person who "
    "started it, the people who may decide what it waits on, and the policy's operators "
    "may answer or steer it. Your reply was not sent to the agent and decides no card "
    "(use a card's buttons for that); the attempt is in the run's audit."
)
MAY_NOT_ANSWER_SHORT = (
    "Only the person who started this run, its deciders and the operators may answer."
)
REPLY_BEFORE_CARD = (
    "Your reply was posted before the card for {id} was, so it does not decide it "
    "(a late delivery cannot approve what you had not seen). Reply again below the card, "
    "or use its buttons."
)
REPLY_RUN_ENDED = (
    "Run {run_id} has ended ({state}), so your reply was not sent to its agent and decides nothing."
)
REPLY_NOTHING_PENDING = (
    "Nothing in this thread waits for a decision any more, so your reply decides "
    "nothing and goes to no agent."
)
REPLY_NOT_A_DECISION = (
    "This thread holds a card waiting for a decision. A reply decides it only when it is "
    "exactly an approve word (e.g. `approve`) or a reject word with a reason "
    "(`reject: why`); yours was neither, so nothing was changed."
)

# -- Slack Connect (members of other workspaces) ------------------------------------------
FOREIGN_MAY_NOT_DIRECT = (
    "You are a member of another workspace, so you may not answer or steer run {run_id} "
    "unless its policy names your user id. Nothing was sent to the agent; the attempt is "
    "in the run's audit."
)
WHY_FOREIGN = (
    "you are a member of another workspace, and only people of this workspace named by "
    "their user id may decide, answer or steer here"
)

# -- who may see a request (bot/slack/listeners/approvals.py, bot/slack/listeners/commands.py) -----
MAY_NOT_SEE = (
    "Only the people who may decide {id} and the policy's operators may see its full arguments."
)

# -- channel principals (bot/slack/checks/principals.py) ---------------------------------------
CHANNEL_UNKNOWN = (
    "{where}: the channel {name} does not exist in this Slack workspace (or the bot "
    "cannot see it); anyone could create it and so become an approver. Fix: create it "
    "and invite the bot, or name another channel or a user group."
)
CHANNEL_ARCHIVED = (
    "{where}: the channel {name} ({id}) is archived; its former members would still "
    "count as approvers. Fix: name a live channel or a user group."
)
CHANNEL_PUBLIC_APPROVERS = (
    "WARNING {where}: {name} is a public channel, and anyone in the workspace can join "
    "it and so approve {tier} requests. Use a user group (S…) or a private channel as "
    "the approvers of a {tier} tier."
)
CHANNELS_UNCHECKED = (
    "Could not reach Slack to check the policy's channels ({error}); channel names are "
    "resolved at the first decision instead."
)
CHANNELS_CHECKED = "Channels resolved in Slack: {names}."

# -- clicks, slash commands and modals (bot/slack/listeners/approvals.py, commands.py) ------------
BAD_BUTTON = "This button does not belong to a request I know; open the latest message."
REASON_REQUIRED_SHORT = "Pick a reason code."
EDIT_BAD_JSON = "Not valid JSON: {error}"
ANSWER_EMPTY = "Write an answer first."
HITL_USAGE = (
    "Usage: /hitl pending | policy | run <agent> <prompt> | steer <run> <text> | "
    "stop <run> | audit <request> | grants [revoke <grant>] | passkey [remove <id>]"
)
STEER_QUEUED = "Queued for {run_id}; the agent reads it at its next tool call."
STOP_DONE = "Stopping {run_id}: pending requests and questions are withdrawn."
RUN_STARTED = "Started {run_id} with the {agent} agent."
MENTION_NO_AGENT = (
    "No agent is chosen for mentions, so nothing was started. The workers offer: {agents}. "
    "Start one with `/hitl run <agent> <what to do>`, or have an operator set "
    "`HITL_DEFAULT_AGENT` for `hitl-bot serve` (a worker started with a single "
    "`--agent` is chosen by itself)."
)
NO_AGENTS_OFFERED = "none (no worker with `--agent` is running)"

# -- cards, thread lines and lists (bot/slack/blocks/render.py, call.py, views.py) --------------
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
# An approval confirmed with the approver's passkey (step-up).
APPROVED_PASSKEY = "✅ Approved by {who} (passkey) · {at}"
EDITED_PASSKEY = "✏️ Edited and approved by {who} (passkey) · {at}"
# A proposal is approved by choosing one of its candidates: never "edited".
RESOLUTION_CHOSEN = "✅ Approved: candidate {n} chosen by {who} · {at}"
WITHDRAWN_LABEL = "🚫 Withdrawn"  # the state of a call withdrawn before anyone decided it
# The bot's own reason codes, in words (a person's are REASON_LABELS).
SYSTEM_REASONS = {
    "superseded": "a person corrected the agent, so it asks again",
    "run_stopped": "the run was stopped",
    "withdrawn": "the agent withdrew it",
    "no_review": "the policy exempts it from review",
    "no_response": "nobody decided in time",
    "unknown_tool": "the agent has no such tool",
    "claim_expired": "approved, but never started in time",
}

HEAD_PENDING = "{risk} risk — approval needed"
HEAD_STATE = "{risk} risk — {state}"
HEAD_ESCALATED = "⏫ Escalated: {risk} risk — approval needed"
CALL_INTRO = "The agent wants to call {tool} with these arguments:"
# An edited call: each changed value beside what the agent asked for, struck through.
ARG_ASKED = "{now} (asked: ~{asked}~)"
EDITED_ASKED = "✏️ Edited by a person. The agent asked for: {changes}"
EDITED_ITEM = "{name} ~{asked}~"
ARG_NOT_GIVEN = "not given"
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
F_CHOSEN_FROM = "Chosen from the proposal of hash"
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
F_REPORT = "Reported by the executor:"
BTN_APPROVE = "Approve"
BTN_REJECT = "Reject"
BTN_EDIT = "Edit and approve"
BTN_VIEW = "View full payload"
BTN_BACK = "Go back"
BTN_ANSWER = "Answer"
CONFIRM_TITLE = "Approve this {risk} risk call?"
CONFIRM_TEXT = "{tool}: {details}. It runs exactly as shown once the required approvals are in."
CONFIRM_TEXT_BARE = (
    "{tool}, with the arguments on the card. It runs exactly as shown once approved."
)
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
SL_CHOSEN = "✅ Candidate {option} chosen by {who} ({n} of {total}); payload hash {hash}"
SL_REJECTED = "⛔ Rejected by {who}: {why}"
SL_ESCALATED = "⏫ Escalated to level {level}: {who}"
SL_EXHAUSTED = {
    "auto_rejected": "⌛ Rejected by policy (nobody answered in time)",
    "auto_approved": "✅ Approved by policy (nobody answered in time)",
}
SL_NOT_CLAIMED = "⌛ Approved but never started in time; cancelled so it cannot run late"
SL_CANCELLED = "🚫 Withdrawn by {who}{text}"
SL_WITHDRAWN = {  # by the bot's reason code: a run's step withdrawn, not the run cancelled
    "superseded": "🚫 Withdrawn: {who} corrected the agent{text}",
    "run_stopped": "🚫 Withdrawn: {who} stopped the run{text}",
}
SL_NO_REPORT = "no report from the executor"
STATUS_LINES = {
    "approved": "✅ Approved",
    "executing": "▶️ Executing",
    "completed": "✔️ Completed",
    "rolled_back": "↩️ Rolled back",
}
SL_REPORTED = "{line}. Reported by the executor: {detail}"
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
    "not_saved": "⏳",
    "store_down": "⏳",
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
    "not_saved": "Not yet saved: the store's replicas did not confirm it in time, so a "
    "failover could still undo it. Try again.",
    "store_down": "The store did not answer, so nothing was decided. Try again in a moment.",
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
PROPOSAL_INTRO = (
    "The agent proposes {n} calls of {tool}: choose the one to run, or reject them all."
)
CANDIDATE_HEAD = "*Candidate {n}* · `{hash}`"
CANDIDATE_VOTES = " · chosen so far, approvals {approvals}"
CANDIDATE_CHOSEN = " · ✅ *chosen*"
BTN_CHOOSE = "Choose {n}"
CONFIRM_CHOICE = (
    "Candidate {n} of {tool} runs exactly as shown once the required approvals choose it."
)
OPTION_TAKEN = ":information_source: {who} already chose “{option}”; your click changed nothing."
OPTION_REPLY_NOT_ONE = (
    "⚠️ This question takes one of its options: {options}. Click one on the card, or "
    "reply with one of them as written. Your reply was not taken as an answer."
)
Q_FALLBACK = "❓ The agent asks: {question}"
Q_FALLBACK_ANSWERED = "💬 {who} answered: {answer}"

RUN_HEAD = "🤖 {agent} — agent run"
RUN_STEER_HINT = (
    "Reply in this thread to steer the agent: it reads your correction before its next tool call."
)
RUN_FALLBACK = "{state} · {agent} run {id}"
# Atop an outside agent's card that has a title (a Claude Code session names its folder).
RUN_TITLE_LINE = (
    "🤖 *{title}* · run {id} · reply in this thread to steer it, or `/hitl stop {raw_id}`"
)
F_PROMPT = "Prompt"
F_TURNS = "Turns"
F_WAITING_ON = "Waiting on"
F_RESULT = "Result"
F_ERROR = "Error"

PENDING_HEAD = "⏳ Pending approvals: {n}"
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

# -- what a listener answers when it changes nothing (bot/slack/listeners) -----------------------
EDIT_GONE = "This request no longer exists; nothing was changed."
REASON_TOO_LONG = "At most {limit} characters."
PAYLOAD_UNREADABLE = (
    "I could not read what Slack sent for that, so nothing was changed. Try again from "
    "the latest message; if it happens again, tell the bot's operator."
)
VIEW_SEAL_BAD = (
    "This dialog was not opened by this bot, or was changed on the way, so nothing was "
    "changed. Open it again from the latest message."
)
APP_NEEDS_KEY = "The Slack app seals its modals with serve's signing key: none was given."
VIEW_SEAL_MISSING = "A modal can only be opened by a listener behind the Slack prologue."
VIEW_SEAL_TOO_LONG = "A modal's metadata, sealed, would pass Slack's {limit} characters."
REFUSED_TITLE = "Nothing changed"
OPTION_NOT_OFFERED = "That is not one of the options this question offered; nothing was changed."

# -- who may steer, read or decide by reply (bot/slack/listeners/threads.py, commands.py) ----------
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
