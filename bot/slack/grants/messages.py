"""What the standing approvals say in Slack (bot/slack/grants). `str.format` templates
filled by keyword with text already escaped for mrkdwn (tests/test_messages.py)."""

from __future__ import annotations

BTN_GRANT = "Approve and allow similar for {span}"
BTN_REVOKE = "Revoke"
SCOPES = {"run": "this run", "requester": "this requester"}

MODAL_TITLE = "Allow similar calls"
MODAL_SUBMIT = "Approve and allow"
MODAL_INTRO = (
    "Approves {id} now, and lets later {tool} calls by {requester} pass without a card "
    "while they stay inside the bounds below. Each pass is audited as approved by you "
    "under this grant, and you, the tier's approvers or an operator can revoke it."
)
BOUND_EQ = "{name} = {value}"
BOUNDS_HEAD = "*Must be exactly as approved*"
BOUNDS_NONE = "_(no argument must be equal)_"
SCOPE_LABEL = "Calls from"
SPAN_LABEL = "For how long (at most {max})"
USES_LABEL = "How many calls (1 to {max})"
MIN_LABEL = "{name}: from"
MAX_LABEL = "{name}: up to"
RANGE_HINT = (
    "Approved: {value}. The range must include it. A range across zero lets a call go the "
    "other way (a negative refund takes money back): set it so only if you mean it."
)
RANGE_LINE = "{name} from {lo} to {hi}"
ACROSS_ZERO = " (across zero: either sign passes)"

BAD_USES = "Write a whole number from 1 to {max}."
BAD_RANGE = (
    "Write two numbers, from and up to, with the approved {value} between them "
    "(digits, an optional minus and decimal point)."
)
BAD_SPAN = "Pick one of the offered durations."
BAD_SCOPE = "Pick one of the offered scopes."
NOT_ALLOWED = (
    "The {risk} tier allows no standing approvals (its policy has no `standing`, needs "
    "a quorum, or is critical): approve this call alone."
)
GRANT_REFUSED = "No grant was made: {why}"

LINE_LIVE = (
    "Standing approval `{gid}` by {granter}: similar {tool} calls from {scope} "
    "pass until {until} ({left} of {uses} left)."
)
LINE_RANGES = " Within: {ranges}."  # after LINE_LIVE: the numbers a grant passes
LINE_ENDED = "Standing approval `{gid}` by {granter} ended: {why}."
WHY_REVOKED = "revoked by {who}"
WHY_EXPIRED = "expired"
WHY_USED_UP = "all {uses} uses taken"

NOTE_PASSED = (
    "{tool} ({id}) passed under standing approval `{gid}` by {granter}: {left} "
    "of {uses} uses left, until {until}."
)

REVOKED = "Revoked standing approval `{gid}`."
REVOKED_ALREADY = "Standing approval `{gid}` was revoked already, by {who}."
REVOKE_GONE = "No standing approval `{gid}`."
MAY_NOT_REVOKE = (
    "Only whoever granted `{gid}`, the approvers of its tier and the operators may revoke it."
)
LIST_HEAD = "Standing approvals ({n} live)"
LIST_NONE = "No standing approval is live."
LIST_USAGE = "Revoke one with `/hitl grants revoke G…`."
HOME_HEAD = "Standing approvals you may revoke ({n})"
