"""The sentences every layer may show a person: refused decisions, checked arguments,
serving, the operator's CLI.

A part's own sentences live in its own `messages` module (bot/slack/messages.py holds
everything a card, a modal or a thread line says). Each is a `str.format` template
filled by keyword; tests/test_messages.py checks every use against its placeholders.
"""

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


# What an agent's model reads instead of a tool's result when a person spoke first: the
# worker, the SDK, the HTTP API and MCP all say the same.
CALL_STEERED = "Cancelled. The person says: {text}"
CALL_HARD_STOP = "Cancelled. The person stopped the run: {text}"
CALL_RUN_STOPPED = "Cancelled: the run was stopped by a person. Do nothing more."

ALREADY_RESOLVED = "Already {how} by {by} ({at}); nothing changed."
EXPIRED = "This request expired ({at}); the policy default decides now: {default}."
STALE_PAYLOAD = (
    "The call changed after you looked at it (you saw {seen}, it is now {current}). "
    "Open the latest message and decide again."
)
NOT_ELIGIBLE = "{actor} may not decide this request: {why}."
# Said whether or not they are among the approvers: being one never lets a person approve
# their own action, so "who may decide: @finance" alone reads false to a member of it.
WHY_REQUESTER = (
    "it was asked for by you (or for you), and nobody approves their own action, "
    "not even one of its approvers; it needs someone else of: {approvers}"
)
WHY_NOT_APPROVER = "not among its approvers ({approvers})"
# The same refusals as a modal's field errors: plain text (Slack renders no mention or
# date there), short (Slack cuts them; bot/slack/blocks/modal_errors.py fits the names).
MODAL_NOT_APPROVER = "You are not among those who may decide this: {approvers}."
MODAL_OWN = (
    "You asked for this (or it is for you): approver or not, it needs someone else of: {approvers}."
)
MODAL_FOREIGN = (
    "You are in another workspace: only people this workspace names by user id may decide here."
)
MODAL_STALE = "The call changed after you opened this form; close it and decide on the latest card."
ALREADY_CLAIMED = (
    "Already claimed: an executor took this call and it is {state} (approved by {by}, {at}); "
    "nothing changed."
)
REASON_REQUIRED = "A rejection needs a reason code, one of: {codes}."
POLICY_NOT_A_TIER = "{value} is not a risk tier; fix: use one of low, medium, high, critical"
POLICY_GOT = "{problem} (the file says {value})"
STEP_UP_NEEDS_PUBLIC_URL = (
    "the policy's tiers {tiers} need a passkey step-up, and HITL_PUBLIC_URL is not set, "
    "so no one could confirm an approval; fix: export HITL_PUBLIC_URL=https://... (the "
    "address people's browsers reach hitl-bot serve at), or remove step_up from the policy"
)
STEP_UP_AUDIT_NONE = "an approval on the {tier} tier, which asks for a passkey, names none"
STEP_UP_AUDIT_NOT_THEIRS = "the passkey {cred} that confirmed this approval was never {actor}'s"
STEP_UP_NO_CRITICAL = (
    "warning: the critical tier has no step_up: a Slack click alone approves its calls; "
    "fix: add 'step_up: passkey' to tiers.critical (docs/security.md)"
)
EDIT_NOT_ALLOWED = "The policy does not allow editing {tool} before approval."
EDIT_NEEDS_ARGS = "Edit and approve needs the new arguments."
NOT_ALLOWED = "Cannot {event} a request that is {state}."
STALE_FENCE = (
    "Not recorded: request {id} was claimed again by another executor since the claim "
    "this report holds (fence {given}), so this report is not recorded; the later "
    "claim's report is the one that stands."
)
UNKNOWN_REQUEST = "No request with id {id}."
UNKNOWN_GRANT = "No standing approval with id {id}."
RECORD_DAMAGED = (
    "Request {id} cannot be read from the store ({why}): its record was written or changed "
    "outside hitl-bot. Nothing acts on it; restore it from a backup or cancel the call."
)
GRANT_NEEDS_KEY = (
    "Standing approvals are made and passed only by `hitl-bot serve`, with its signing key; "
    "this process has none."
)
UNKNOWN_RUN = "No run with id {id}."
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
OPTIONS_TOO_MANY = "{n} options offered; a question takes at most {max}."
OPTION_BLANK = "option {n} is empty or starts or ends with spaces"
OPTION_TOO_LONG = "option {n} is longer than {max} characters (what a Slack button shows)"
OPTION_CONTROL = "option {n} holds a control or invisible character"
OPTION_TWICE = "option {n} repeats an earlier option"
CANDIDATES_COUNT = "{n} candidates proposed; a proposal takes {min} to {max}."
CANDIDATE_NOT_OBJECT = "candidate {n} is not a JSON object of arguments"
CANDIDATE_PROBLEM = "candidate {n}: {problem}"
CANDIDATE_TWICE = "candidate {n} repeats an earlier candidate"
CANDIDATE_DOES_NOT_FIT = "candidate {n} does not fit the schema of {tool}: {problems}"
PROPOSAL_NEEDS_REVIEW = (
    "{tool} runs without review under the policy: propose its calls one by one instead."
)
ARGS_OR_CANDIDATES = "give either args or candidates, not both"
CHOOSE_A_CANDIDATE = "This is a proposal: choose one of its candidates to approve it."
NOT_A_CANDIDATE = "That call is not one of the proposal's candidates."
NOT_AN_OPTION = "That answer is not one of this question's options: {options}."

ARGS_TOO_DEEP = "tool arguments nest deeper than {limit} levels"
ARGS_INEXACT_NUMBER = (
    "tool argument {path} is an integer beyond ±2^53 (9007199254740992), which a JSON "
    "number cannot carry exactly; send it as a string"
)
TEXT_LONE_SURROGATE = (
    "text holds a lone UTF-16 surrogate (such as \\ud800), which UTF-8 cannot carry"
)
TASK_DOWN = "background task {task} failing for {seconds} s ({failures} failures; see the log)"
REDIS_DOWN = "Redis/Valkey does not answer (see the log)"
TASK_ENDED = "the task returned before it was asked to stop"
PORT_IN_USE = (
    "Cannot listen on {host}:{port}: {error}; fix: stop what holds the port, or set "
    "HITL_PORT to a free one."
)
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

# -- checking edited arguments (bot/core/args/schema.py) -------------------------------------
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
ARGS_DO_NOT_FIT = "The arguments of {tool} do not fit its args_schema: {problems}"

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
CLI_RUN_QUESTIONS = "questions: {n}"
CLI_RUN_ASKED = "asked: {text}"
CLI_RUN_ANSWERED = "{who} answered: {text}"
CLI_RUN_UNANSWERED = "  no answer ({state})"
CLI_RUN_STEERING = "steering: {n} from people, {queued} not read by the agent yet"
CLI_RUN_STEER = "{who} ({how}): {text}"
CLI_RUN_REFUSED = "{who} may not {what}: refused"

# bot/db/hub.py
WAIT_CLOSED = "This process closed its Redis connection while a wait was held; wait again."
UVLOOP_MISSING = (
    "HITL_UVLOOP is set but uvloop is not installed; fix: pip install 'hitl-bot[uvloop]', "
    "or unset HITL_UVLOOP to run on asyncio's own loop"
)
CLI_POLICY_TIMEOUTS = (
    "An approved call waits {claim} for its executor; a claimed call may run {run} "
    "without a report."
)
# A person's decision while the store does not answer (a failover, a lost connection).
STORE_DOWN_DECISION = "The store did not answer, so nothing was decided. Try again in a moment."

# A client-only install (`pip install hitl-bot`) asked to run what needs the server extra.
NEEDS_SERVER = (
    "This needs hitl-bot's server packages ({module} is not installed): "
    "pip install 'hitl-bot[server]'. An agent that talks to a running serve over HTTP "
    "(api_url and api_token) needs only `pip install hitl-bot`."
)

# Retention (bot/deadlines/retention.py, bot/cli/maintenance.py)
ARCHIVE_UNWRITABLE = (
    "retention could not write the archive at {path} ({error}): nothing left the live "
    "store. Give serve a writable HITL_ARCHIVE_DIR (docs/retention.md)."
)
RETIRED = "Retired {requests}, {runs} and {questions} to {segment}."  # each counted: plural()
RETIRED_NONE = "Nothing ended before {cutoff}: nothing retired."
RETIRED_KEPT = (
    "Kept {n} finished requests whose history does not verify (run `hitl-bot audit verify`): {ids}"
)
RETENTION_OFF = (
    "HITL_RETENTION is off: nothing leaves the live store. Give --older-than to run once."
)
