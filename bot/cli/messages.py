"""What the operator's command line says (`policy diff`, `shadow-report`, `report`): typed,
so a wrong placeholder fails mypy."""

from __future__ import annotations

from datetime import UTC, datetime

# A request whose notice the Slack notifier parked (bot/store/posted/parked.py): `pending`, `show`.
CARD_NOT_DRAWN = (
    "{id}: its Slack card could not be drawn, so nobody in Slack sees it "
    "(serve's log has the error): {why}"
)

DIFF_HEAD = "Replayed {n} requests made since {since} through {old} (old) and {new} (new)."
DIFF_EMPTY = "No requests were made since {since}: nothing to replay."
DIFF_TIERS = "Requests by tier, old -> new:"
DIFF_REVIEW = (
    "Review: {dropped} would no longer go to a person (review: none); {added} would now go to one."
)
DIFF_NO_TERMS = "The two files give every tier the same review terms."
DIFF_TERMS = "Review terms that change, by tier:"
DIFF_KINDS = "Requests whose review terms would change: {kinds}."
DIFF_TO_AUTO = "Decided by a person, resolved without one under the new policy ({n}):"
DIFF_TO_PERSON = "Resolved without a person, sent to one under the new policy ({n}):"
DIFF_NONE_MOVED = "No request would move between a person and the policy."
DIFF_REFUSED = (
    "{n} requests asked for a channel the new policy does not review their tier in "
    "(it would refuse them): {ids}"
)
DIFF_UNLIKE = (
    "Note: {n} requests were gated at a tier or review the old file does not give them "
    "(was it the policy in effect then, or did callers raise the tier?): {ids}"
)
# How a recorded end reads, and what the new policy makes of it.
DIFF_WAS_PERSON = "{result} by {who} after {waited}"
DIFF_WAS_AUTO = "{result} (no review)"
DIFF_WAS_DEFAULT = "{result} after {waited} (nobody answered)"
DIFF_BECOMES_NO_REVIEW = "approved at once (review: none)"
DIFF_BECOMES_PERSON = "sent to a person"
DIFF_BECOMES_DEFAULT = "{default} after {chain} (its chain runs out before that)"
DIFF_LONGER = "kept before a person for {chain}"

SHADOW_HEAD = (
    "{n} requests made since {since} were judged by the shadow policy; {m} disagree "
    "with the real one."
)
SHADOW_NONE = (
    "No request made since {since} carries a shadow verdict: is HITL_SHADOW_POLICY set "
    "for the processes that create requests (serve, the worker, the SDK in direct mode)?"
)
SHADOW_BY_KIND = "Disagreements by tool and kind:"
SHADOW_AGREE = "The shadow policy agrees with the real one on every request."

# hitl-bot report: tables and the HTML page.
REPORT_TITLE = "Approval fatigue"
REPORT_NONE = "No decisions from {since} to {until}."
REPORT_WROTE = "Wrote {path}"
REPORT_FLOOR = (
    "Too fast: decided sooner than {base:g} s plus {per_line:g} s for each line the card "
    "showed. Times run from the card's first post to the decision."
)
TIER_COLUMNS = (
    "tier",
    "by people",
    "approved",
    "rejected",
    "median",
    "p90",
    "too fast",
    "busiest approver",
    "auto_approved",
    "auto_rejected",
    "no review",
)
APPROVER_COLUMNS = ("tier", "approver", "decisions", "approved", "median", "p90", "too fast")
WEEK_COLUMNS = (
    "week",
    "tier",
    "approved",
    "rejected",
    "auto_approved",
    "auto_rejected",
    "no review",
)
CHART_TIMES = "Seconds from card to decision (median and p90), by tier"
CHART_WEEKS = "Decisions by week, tier and outcome"
NONE = "-"


def window(since: str, until: str) -> str:
    return f"From {since} to {until}"


def seconds(value: float | None) -> str:
    return NONE if value is None else f"{value:.1f} s"


def share(value: float | None) -> str:
    return NONE if value is None else f"{value:.0%}"


def named(pid: str, names: dict[str, str]) -> str:
    """An id as Slack shows it, where serve looked its name up: "Kid (UKID)"; else the id."""
    name = names.get(pid)
    return f"{name} ({pid})" if name else pid


def busiest(name: str, part: float) -> str:
    return f"{name} ({part:.0%})"


def too_fast(n: int, of: int) -> str:
    return f"{n} of {of}" if of else NONE


def day(ms: int) -> str:
    """A time in the report, UTC to the minute."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def week_label(ago: int) -> str:
    return f"week -{ago}" if ago else "this week"


def span(start: str, end: str) -> str:
    return f"{start} to {end}"


# `hitl-bot keys rotate`: what changed, and the order to roll it out in.
ROTATED_FILE = (
    "New signing key {new} written to {path} (0600). The keys it replaces stay trusted "
    "for verifying, in {previous}: {old}."
)
ROTATED_ENV = (
    "New signing key {new}. Nothing was written: HITL_SIGNING_KEY (or its file, "
    "HITL_SIGNING_KEY_FILE) holds serve's key. "
    "Set these (the first is a secret: keep it as you keep the current one):"
)
ROLL_FILE = (
    "Roll it out:",
    "  1. Executors sharing this data dir accept both keys now. Any that do not: set "
    "HITL_SIGNING_PUBLIC_KEY={public} and restart them.",
    "  2. Then restart each serve using this data dir: until it restarts it signs with {old}.",
    "  3. Keep the old keys: `hitl-bot audit verify` needs them for every decision they "
    "sealed. An executor may drop one (a line of {previous}) once nothing it sealed waits "
    "to be claimed.",
)
ROLL_ENV = (
    "Roll it out in this order:",
    "  1. Set HITL_SIGNING_PUBLIC_KEY above on every executor and every serve, and restart "
    "them: each accepts both keys.",
    "  2. Then set HITL_SIGNING_KEY above on each serve (keeping HITL_SIGNING_PUBLIC_KEY), "
    "restarting one at a time.",
    "  3. Keep the old keys where `hitl-bot audit verify` runs: it needs them for every "
    "decision they sealed. An executor may drop {old} once nothing it sealed waits to be "
    "claimed.",
)

# -- `hitl-bot doctor` (bot/cli/doctor*.py): one line per check, with the fix ------------
DOCTOR_SUMMARY = "{fails} FAIL, {warns} WARN, {passes} PASS."
DOCTOR_SETTINGS_BAD = "The environment does not load: {error}"
DOCTOR_NO_TOKEN = "SLACK_BOT_TOKEN is not set: serve cannot talk to Slack."
DOCTOR_NO_TOKEN_FIX = "export SLACK_BOT_TOKEN=xoxb-... (OAuth & Permissions > Bot User OAuth Token)"
DOCTOR_TOKEN_OK = "Slack accepts the bot token: bot {user} ({user_id}) in workspace {team} ({url})."
DOCTOR_TOKEN_REFUSED = "Slack refuses the bot token ({error})."
DOCTOR_TOKEN_REFUSED_FIX = (
    "copy the Bot User OAuth Token again (reinstall the app if it was revoked) into SLACK_BOT_TOKEN"
)
DOCTOR_SLACK_UNREACHABLE = "Cannot reach Slack at {url}: {error}."
DOCTOR_SLACK_UNREACHABLE_FIX = (
    "check the network from this host, and SLACK_API_URL if set (default https://slack.com/api/)"
)
DOCTOR_SLACK_SKIPPED = "Not checked: the Slack token line failed."
DOCTOR_POLICY_SKIPPED = "Not checked: the policy does not load."
DOCTOR_SCOPES_OK = "The token holds every scope manifest.yml asks for ({n})."
DOCTOR_CHANNEL_MEMBER = "{name} ({id}, {kind}): the bot is a member; used at {where}."
DOCTOR_CHANNEL_NOT_MEMBER = (
    "{name} ({id}, {kind}): the bot is not a member; used at {where}: {breaks}."
)
DOCTOR_NOT_MEMBER_POSTS = (
    "its cards and escalations are not posted there, and replies in their threads never "
    "reach the bot"
)
DOCTOR_NOT_MEMBER_PRIVATE = "the bot cannot list its members: nobody in it can approve"
DOCTOR_NOT_MEMBER_LISTED = "it approves through the member list only; nothing is posted there"
DOCTOR_INVITE_FIX = "in Slack, open {name} and type /invite @hitl-bot"
DOCTOR_CHANNEL_HIDDEN = (
    "{where}: Slack does not show the channel {name} to the bot: it does not exist, or it "
    "is private and the bot is not a member (nobody in it can approve, nothing is posted)."
)
DOCTOR_CHANNEL_LOOKUP_FAILED = "{name}: Slack would not answer conversations.info ({error})."
DOCTOR_NO_CHANNELS = "The policy names no channel."
DOCTOR_GROUP_OK = "User group {name}: {n} member(s); used at {where}."
DOCTOR_GROUPS_UNCHECKED = (
    "The policy's user groups were not checked: the token lacks usergroups:read."
)
DOCTOR_NO_GROUPS = "The policy names no user group."
DOCTOR_SOCKET_OK = "Socket Mode: Slack accepts SLACK_APP_TOKEN (apps.connections.open)."
DOCTOR_SOCKET_REFUSED = "Socket Mode: Slack refuses SLACK_APP_TOKEN ({error})."
DOCTOR_SOCKET_FIX = (
    "create an app-level token with the connections:write scope (Basic Information > "
    "App-Level Tokens), export it as SLACK_APP_TOKEN, and turn Socket Mode on"
)
DOCTOR_NO_SECRET = "HTTP mode (no SLACK_APP_TOKEN) but SLACK_SIGNING_SECRET is not set."
DOCTOR_NO_SECRET_FIX = (
    "export SLACK_SIGNING_SECRET (Basic Information > Signing Secret), or use Socket Mode "
    "with SLACK_APP_TOKEN"
)
DOCTOR_EVENTS_UNCHECKED = "HTTP mode: the events URL Slack calls was not checked."
DOCTOR_EVENTS_UNCHECKED_FIX = (
    "run hitl-bot doctor --events-url https://YOUR_HOST/slack/events (the Request URL in "
    "the app's settings) while serve runs"
)
DOCTOR_EVENTS_OK = "HTTP mode: {url} answers Slack's signed url_verification challenge."
DOCTOR_EVENTS_BAD = "HTTP mode: {url} does not answer Slack's url_verification challenge ({why})."
DOCTOR_EVENTS_FIX = (
    "make sure serve runs and is reachable at that address over HTTPS, with the same "
    "SLACK_SIGNING_SECRET as the app's, and that the app's Request URL is this one"
)
DOCTOR_STORE_OK = "The store answers: {where}."
DOCTOR_STORE_EMBEDDED = "the embedded Valkey in {path} (append-only, noeviction: set by hitl-bot)"
DOCTOR_STORE_BAD = "The store cannot be used: {error}"
DOCTOR_STORE_SKIPPED = "Not checked: the store line failed."
DOCTOR_PERSIST_OK = "Redis keeps an append-only file and never evicts (appendonly yes, noeviction)."
DOCTOR_PERSIST_BAD = "Redis {name} is {value!r}: a crash or memory pressure loses approvals."
DOCTOR_PERSIST_UNREAD = "Redis would not show its settings (CONFIG GET: {error})."
DOCTOR_PERSIST_UNREAD_FIX = (
    "make sure the server keeps an append-only file and uses maxmemory-policy noeviction"
)
DOCTOR_REPLICAS_NONE = (
    "No replicas, HITL_REPLICA_ACKS=0: a transition is saved once the primary has it."
)
DOCTOR_REPLICAS_OK = "HITL_REPLICA_ACKS={n} with {r} replica(s): each transition waits for {n}."
DOCTOR_REPLICAS_OFF = (
    "Redis has {r} replica(s) but HITL_REPLICA_ACKS=0: a decision acknowledged just before "
    "a failover can be lost."
)
DOCTOR_REPLICAS_OFF_FIX = "export HITL_REPLICA_ACKS=1"
DOCTOR_REPLICAS_SHORT = (
    "HITL_REPLICA_ACKS={n} but a primary has {r} replica(s): every decision and claim is "
    "refused as not yet saved."
)
DOCTOR_REPLICAS_SHORT_FIX = "connect {n} replica(s) to every primary, or lower HITL_REPLICA_ACKS"
DOCTOR_REPLICAS_UNREAD = "Redis would not say how many replicas it has."
DOCTOR_RETENTION_OFF = (
    "Retention is off (HITL_RETENTION=off): every finished request stays in Redis for ever."
)
DOCTOR_RETENTION_OFF_FIX = (
    "set HITL_RETENTION=90d with HITL_ARCHIVE_DIR on persistent storage every serve "
    "shares (docs/retention.md)"
)
DOCTOR_RETENTION_UNWRITABLE = (
    "Retention cannot write its archive at {path}: nothing will leave Redis."
)
DOCTOR_RETENTION_UNWRITABLE_FIX = (
    "give serve's user a writable HITL_ARCHIVE_DIR on persistent storage (docs/retention.md)"
)
DOCTOR_RETENTION_OK = (
    "Finished history leaves Redis after {period} for the archive at {path} "
    "({segments} segments so far)."
)
DOCTOR_KEY_ENV = "The signing key comes from HITL_SIGNING_KEY (key id {key_id})."
DOCTOR_KEY_FILE = "The signing key {path} is readable by its owner only (key id {key_id})."
DOCTOR_KEY_BAD = "The signing key cannot be used: {error}."
DOCTOR_KEY_NONE = "No signing key yet: {error}."
DOCTOR_POLICY_OK = "The policy {source} loads: {tiers} tiers, {tools} tools listed."
DOCTOR_POLICY_BAD = "The policy {source} does not load: {error}"
DOCTOR_POLICY_FIX = "correct the file (hitl-bot policy check FILE names each problem)"
DOCTOR_WORKERS_OK = "A worker offers: {agents}."
DOCTOR_WORKERS_NONE = (
    "No worker offers an agent: a mention of the bot and /hitl run start runs nobody takes."
)
DOCTOR_WORKERS_FIX = "start one beside serve: hitl-bot worker (--agent module:object for your own)"
DOCTOR_DEFAULT_OK = "The default agent {agent} is offered by a worker."
DOCTOR_DEFAULT_ONE = "HITL_DEFAULT_AGENT is unset: a mention starts {agent}, the one agent offered."
DOCTOR_DEFAULT_MISSING = (
    "HITL_DEFAULT_AGENT={agent} but no worker offers it (offered: {offered}): a mention "
    "starts a run nobody takes."
)
DOCTOR_DEFAULT_MISSING_FIX = (
    "start a worker with --agent {agent}, or set HITL_DEFAULT_AGENT to one offered"
)
DOCTOR_DEFAULT_UNSET = (
    "HITL_DEFAULT_AGENT is unset and {n} agents are offered: a mention asks which to start."
)
DOCTOR_DEFAULT_UNSET_FIX = "export HITL_DEFAULT_AGENT=NAME (one of those a worker offers)"
DOCTOR_NONE = "(none)"
MAINT_QUESTIONS_INDEXED = (
    "Checked {n} questions: each is in its run's index and leaves the store on schedule."
)

# -- hitl-bot passkey (bot/cli/passkey.py) ---------------------------------------------------
PASSKEY_NONE = "No passkey is enrolled."
PASSKEY_REVOKED = "Revoked {user}'s passkey {id}: a confirmation with it is refused from now on."
PASSKEY_NOTHING_REVOKED = "{user} has no such passkey; `hitl-bot passkey list {user}` shows theirs."
MAINT_RUNS_INDEXED = (
    "Checked {n} runs: each is in the run indexes, which name no run the store lost;"
    " and {requests} requests: each filed under a run is in its run's index."
)

# What a reader of the archive (export, report, show) says when part of it could not be
# read: those segments' records are left out, never silently.
ARCHIVE_PROBLEM = "archive: {problem}"
ARCHIVE_PARTIAL = (
    "What those segments hold is left out above, so this is not the whole history: "
    "`hitl-bot audit verify` names every problem; restore the segment from a backup."
)
SHOW_ARCHIVE_DAMAGED = (
    "The archive has {n} problem(s), so it may be in a segment that could not be read: "
    "`hitl-bot audit verify` names them."
)

# `show ID` of a request retention moved out of the live store (bot/cli/show.py).
SHOWN_ARCHIVED = (
    "archived {at}: retention moved this request out of the live store (HITL_RETENTION); "
    "its history below is the archive's sealed copy"
)
