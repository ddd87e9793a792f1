"""A tool's tier rules: `if: "amount > 1000"` raises a call to a higher tier."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any, ClassVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.core.models import RiskTier


class Rule(BaseModel):
    """`if: "amount > 1000"` raises the tool's tier to `tier` when the argument matches.

    Fails closed: a call that lacks the argument, or whose value cannot be compared,
    is raised to the rule's tier too, so a typo in a rule or a missing argument can
    never leave a call at a lower tier than the rule meant.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    condition: str = Field(alias="if")
    tier: RiskTier

    _OPS: ClassVar[dict[str, Callable[[Any, Any], bool]]] = {
        ">=": operator.ge,
        "<=": operator.le,
        "!=": operator.ne,
        ">": operator.gt,
        "<": operator.lt,
        "==": operator.eq,
        # before " in ", which it holds: "to not in [a, b]" must not read as "to not"
        " not in ": lambda a, b: a not in b,
        " in ": lambda a, b: a in b,
    }
    _PATH: ClassVar[re.Pattern[str]] = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$")

    @field_validator("condition")
    @classmethod
    def _parses(cls, v: str) -> str:
        cls.split(v)
        return v

    @classmethod
    def split(cls, cond: str) -> tuple[str, str, Any]:
        for op in cls._OPS:
            path, sep, literal = cond.partition(op)
            if not sep:
                continue
            path, literal = path.strip(), literal.strip()
            try:
                expected = yaml.safe_load(literal) if literal else None
            except yaml.YAMLError:
                expected = None
            if cls._PATH.match(path) and literal and _comparable(op, expected):
                return path, op, expected
            break
        raise ValueError(
            f"cannot read the rule {cond!r}; fix: write it as 'argument op value', "
            "for example 'amount > 1000' or 'currency in [USD, EUR]' "
            "(ops: > >= < <= == != in, not in; one argument name, a dotted path for nested "
            "ones)"
        )

    @property
    def argument(self) -> str:
        """The top-level argument the rule reads."""
        return self.split(self.condition)[0].split(".")[0]

    def matches(self, args: dict[str, Any]) -> bool:
        path, op, expected = self.split(self.condition)
        value: Any = args
        for part in path.split("."):
            if not isinstance(value, dict) or part not in value:
                return True  # missing: the call cannot prove it is below the rule's tier
            value = value[part]
        if isinstance(value, bool) and not isinstance(expected, bool) and op != "==":
            return True  # true > 1000 would compare as 1 > 1000
        try:
            return bool(self._OPS[op](value, expected))
        except TypeError:
            return True  # an argument of the wrong type cannot prove the call is safe


def _comparable(op: str, expected: Any) -> bool:
    """A literal the operator can compare with: no '>> 1000', no 'amount > '."""
    if op in (" in ", " not in "):
        return isinstance(expected, list | str)
    if op in (">", ">=", "<", "<="):
        return isinstance(expected, int | float | str) and not isinstance(expected, bool)
    return True
