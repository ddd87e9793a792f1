"""What the operator's command line says (`policy diff`, `shadow-report`, `report`): typed,
so a wrong placeholder fails mypy."""

from __future__ import annotations

from datetime import UTC, datetime

# A request whose notice the Slack notifier parked (bot/store/parked.py): `pending`, `show`.
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
    "New signing key {new}. Nothing was written: HITL_SIGNING_KEY holds serve's key. "
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
