"""Bounds read from the calls people approved, written in the policy's own words.

A suggestion that lets part of a tool's calls go with less review must say which part,
and the policy file can only say it with rules that raise a call: each bound becomes a
rule that sends a call outside it back to the tier it has today. A rule fires on a
call that lacks its argument too (bot/core/rules.py fails closed), so a bound is only
drawn on an argument every approved call carried.

Numbers get the range seen, smallest to largest: never wider, never across zero unless
people approved both signs. Text and true/false get the values seen, when they are few
enough to list. Anything else (objects, lists, free text with many values) is left
unbounded and named, so the operator reads what the rules do not hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.core.models import RiskTier
from bot.core.rules import Rule

MAX_VALUES = 20  # distinct values a list bound may name; more is free text
EXACT = 2**53  # numbers past this are not exact in JSON: never inside a bound
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")  # what a rule may read as one argument
# Text a rule would read as its operator: a value holding it cannot be written in one.
_OPERATOR_TEXT = (">", "<", "=", "!", " in ")


class Loose(StrEnum):
    """Why an argument is left unbounded."""

    NOT_ALWAYS = "not_always"  # some approved calls lack it: a rule would raise them
    SHAPE = "shape"  # an object, a list, null, or values of several kinds
    MANY = "many"  # more distinct values than a list bound names
    UNWRITABLE = "unwritable"  # its name or a value cannot be written in a rule


@dataclass(frozen=True)
class Bound:
    """What the approved calls held in one argument: a range, or the values seen."""

    argument: str
    low: int | float | None = None
    high: int | float | None = None
    values: tuple[str | bool, ...] = ()

    @property
    def is_range(self) -> bool:
        return self.low is not None

    def rules(self, tier: RiskTier) -> list[dict[str, str]]:
        """The rules that raise a call outside this bound to `tier`."""
        arg = self.argument
        if self.low is not None and self.high is not None:
            return [
                {"if": f"{arg} > {_number(self.high)}", "tier": tier.value},
                {"if": f"{arg} < {_number(self.low)}", "tier": tier.value},
            ]
        if len(self.values) == 1:
            return [{"if": f"{arg} != {json.dumps(self.values[0])}", "tier": tier.value}]
        return [{"if": f"{arg} not in {json.dumps(list(self.values))}", "tier": tier.value}]

    def holds(self, args: dict[str, Any]) -> bool:
        """Whether a call's argument is inside the bound (a missing one is not)."""
        if self.argument not in args:
            return False
        value = args[self.argument]
        if self.low is not None and self.high is not None:
            return _is_number(value) and self.low <= value <= self.high
        return any(type(value) is type(v) and value == v for v in self.values)


@dataclass(frozen=True)
class Unbounded:
    argument: str
    why: Loose


def _number(value: int | float) -> str:
    """As YAML 1.1 reads it back: its floats need a dot ("1.0e-05", never "1e-05")."""
    text = repr(value) if isinstance(value, float) else str(value)
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text


def _reads_back(bound: Bound) -> bool:
    """Whether the rules say what the bound holds: each literal, read as a rule reads
    it, is the value it was written from."""
    want: list[object] = (
        [bound.high, bound.low] if bound.is_range
        else [bound.values[0]] if len(bound.values) == 1
        else [list(bound.values)]
    )  # fmt: skip
    try:
        got = [Rule.split(r["if"])[2] for r in bound.rules(RiskTier.MEDIUM)]
    except ValueError:
        return False
    return len(got) == len(want) and all(
        type(g) is type(w) and g == w for g, w in zip(got, want, strict=True)
    )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) <= EXACT


def _writable(value: str) -> bool:
    return not any(t in value for t in _OPERATOR_TEXT) and value.strip() == value and bool(value)


def _bound(name: str, seen: list[Any]) -> Bound | Unbounded:
    if not _NAME.match(name):
        return Unbounded(name, Loose.UNWRITABLE)
    if all(_is_number(v) for v in seen):
        return Bound(name, low=min(seen), high=max(seen))
    kinds = {type(v) for v in seen}
    if kinds not in ({str}, {bool}):
        return Unbounded(name, Loose.SHAPE)
    values = sorted(set(seen), key=str)
    if kinds == {bool} and len(values) == 2:
        return Unbounded(name, Loose.SHAPE)  # both seen: nothing to hold
    if len(values) > MAX_VALUES:
        return Unbounded(name, Loose.MANY)
    if kinds == {str} and not all(_writable(v) for v in values):
        return Unbounded(name, Loose.UNWRITABLE)
    return Bound(name, values=tuple(values))


def _checked(name: str, seen: list[Any]) -> Bound | Unbounded:
    got = _bound(name, seen)
    if isinstance(got, Bound) and not _reads_back(got):
        return Unbounded(name, Loose.UNWRITABLE)
    return got


def bounds_of(calls: Sequence[dict[str, Any]]) -> tuple[list[Bound], list[Unbounded]]:
    """The bounds of every argument the approved calls carried, in name order, and the
    arguments left unbounded with why."""
    names = sorted({name for args in calls for name in args})
    bounds: list[Bound] = []
    loose: list[Unbounded] = []
    for name in names:
        seen = [args[name] for args in calls if name in args]
        if len(seen) < len(calls):
            loose.append(Unbounded(name, Loose.NOT_ALWAYS))
            continue
        got = _checked(name, seen)
        if isinstance(got, Bound):
            bounds.append(got)
        else:
            loose.append(got)
    return bounds, loose
