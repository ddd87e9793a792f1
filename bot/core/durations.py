"""Durations as a policy file writes them ('4h', '30m', '90s', '250ms') and as the code
holds them (integer milliseconds)."""

from __future__ import annotations

import re

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")


def parse_duration(value: object) -> int:
    """'4h', '30m', '90s', '250ms' or a number of seconds -> milliseconds."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or text like '30m'")
    if isinstance(value, int | float):
        ms = int(value * 1000)
    else:
        m = _DURATION.match(str(value))
        if not m:
            raise ValueError(f"{value!r} is not a duration; write it like '90s', '30m' or '4h'")
        ms = int(float(m.group(1)) * _UNITS[m.group(2)])
    if ms <= 0:
        raise ValueError("a duration must be positive")
    return ms


def format_duration(ms: int) -> str:
    """Milliseconds as a policy file writes them: the largest whole unit ('4h', '90m',
    '45s'), so `parse_duration(format_duration(ms)) == ms`."""
    for unit in ("d", "h", "m", "s"):
        if ms % _UNITS[unit] == 0 and ms >= _UNITS[unit]:
            return f"{ms // _UNITS[unit]}{unit}"
    return f"{ms}ms"
