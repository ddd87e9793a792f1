"""The argument schema require_approval derives from a function's signature."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from bot.core.args.schema import problems
from bot.sdk.schema import derive


def refund(
    self: Any,
    order_id: str,
    amount: Annotated[float, Field(le=500)],
    note: str = None,  # type: ignore[assignment]  # noqa: RUF013 (people write it)
) -> None:
    """A method with a cap on the amount and the common `str = None` default."""


def test_the_schema_follows_hints_and_leaves_out_hidden_arguments() -> None:
    schema = derive("refund", refund, {"self"})
    assert schema is not None
    assert set(schema["properties"]) == {"order_id", "amount", "note"}
    now = {"order_id": "o1", "amount": 40, "note": None}
    assert problems(schema, now, current=now) == []  # `note=None` fits, as Python allows
    assert problems(schema, {**now, "amount": 900}, current=now)  # over the cap
    assert problems(schema, {**now, "coupon": "x"}, current=now)  # the function has no coupon


def test_no_schema_where_the_names_are_not_fixed() -> None:
    def anything(*args: Any, **kwargs: Any) -> None: ...

    assert derive("anything", anything, ()) is None
