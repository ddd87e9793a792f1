"""The words of `hitl-bot report` (tables, the HTML page): typed, so a wrong placeholder
fails mypy."""

from __future__ import annotations

from datetime import UTC, datetime

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
