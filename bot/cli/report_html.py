"""The report as one self-contained HTML page: tables and charts drawn here as inline
SVG, with no script and nothing fetched, so it opens offline and can be mailed. Every
name in it (tiers, approvers) came from the policy or from Slack: escaped."""

from __future__ import annotations

from collections import Counter
from html import escape

from bot.cli import messages as m
from bot.core.hindsight.fatigue import OUTCOMES, READ_BASE_S, READ_PER_LINE_S, Report

Rows = list[tuple[str, ...]]
COLOURS = {
    "approved": "#2e7d32",
    "rejected": "#c62828",
    "auto_approved": "#81c784",
    "auto_rejected": "#e57373",
    "no_review": "#90a4ae",
    "median": "#1565c0",
    "p90": "#90caf9",
}
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0 2em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; }
td { white-space: nowrap; }
th:nth-child(-n+2), td:nth-child(-n+2) { text-align: left; }
svg text { font: 12px system-ui, sans-serif; fill: #222; }
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _table(columns: tuple[str, ...], rows: Rows) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _legend(names: tuple[str, ...], y: int) -> str:
    parts = []
    for i, name in enumerate(names):
        x = 10 + i * 120
        parts.append(
            f'<rect x="{x}" y="{y}" width="12" height="12" fill="{COLOURS[name]}"/>'
            f'<text x="{x + 16}" y="{y + 11}">{_e(name)}</text>'
        )
    return "".join(parts)


def times_chart(r: Report) -> str:
    """Per tier, a bar for the median and one for the p90, on one scale."""
    tiers = [(t, f.median, f.p90) for t, f in r.tiers.items() if f.seconds]
    top = max((p90 or 0 for _, _, p90 in tiers), default=0) or 1
    width, left, row = 640, 90, 40
    height = 40 + row * len(tiers)
    bars = []
    for i, (tier, median, p90) in enumerate(tiers):
        y = 10 + i * row
        bars.append(f'<text x="4" y="{y + 18}">{_e(tier)}</text>')
        for j, (name, value) in enumerate((("median", median), ("p90", p90))):
            w = max(1, int((value or 0) / top * (width - left - 80)))
            bars.append(
                f'<rect x="{left}" y="{y + j * 14}" width="{w}" height="12" '
                f'fill="{COLOURS[name]}"><title>{_e(tier)} {name}: {_e(m.seconds(value))}'
                f'</title></rect><text x="{left + w + 4}" y="{y + j * 14 + 11}">'
                f"{_e(m.seconds(value))}</text>"
            )
    legend = _legend(("median", "p90"), height - 22)
    return (
        f'<svg role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"<title>{_e(m.CHART_TIMES)}</title>{''.join(bars)}{legend}</svg>"
    )


def weeks_chart(r: Report) -> str:
    """One stacked column a week (oldest on the left), by outcome, all tiers."""
    weeks = [sum(w.values(), Counter[str]()) for w in reversed(r.weeks)]
    top = max((sum(c.values()) for c in weeks), default=0) or 1
    width, base, col = 640, 200, 60
    parts = []
    for i, counts in enumerate(weeks):
        x, y = 20 + i * (col + 20), base
        for outcome in OUTCOMES:
            h = int(counts[outcome] / top * (base - 20))
            if not h:
                continue
            y -= h
            parts.append(
                f'<rect x="{x}" y="{y}" width="{col}" height="{h}" fill="{COLOURS[outcome]}">'
                f"<title>{_e(outcome)}: {counts[outcome]}</title></rect>"
            )
        ago = len(weeks) - 1 - i
        parts.append(f'<text x="{x}" y="{base + 16}">{_e(m.week_label(ago))}</text>')
        parts.append(f'<text x="{x}" y="{y - 4}">{sum(counts.values())}</text>')
    legend = _legend(OUTCOMES, base + 30)
    height = base + 50
    width = max(width, 40 + len(weeks) * (col + 20))
    return (
        f'<svg role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"<title>{_e(m.CHART_WEEKS)}</title>{''.join(parts)}{legend}</svg>"
    )


def page(r: Report, tiers: Rows, approvers: Rows, weeks: Rows) -> str:
    floor = m.REPORT_FLOOR.format(base=READ_BASE_S, per_line=READ_PER_LINE_S)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(m.REPORT_TITLE)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_e(m.REPORT_TITLE)}</h1><p>{_e(m.window(m.day(r.since_ms), m.day(r.now_ms)))}</p>"
        f"<p>{_e(floor)}</p>"
        f"<h2>{_e(m.CHART_TIMES)}</h2>{times_chart(r)}"
        f"<h2>{_e(m.CHART_WEEKS)}</h2>{weeks_chart(r)}"
        f"{_table(m.TIER_COLUMNS, tiers)}{_table(m.APPROVER_COLUMNS, approvers)}"
        f"{_table(m.WEEK_COLUMNS, weeks)}</body></html>\n"
    )
