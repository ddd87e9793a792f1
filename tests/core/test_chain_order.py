"""The order of one history, read from its lines alone (bot/core/proof/chain_order.py)."""

from __future__ import annotations

import json

from bot.core.proof.chain_order import order_problems


def _line(seq: int, version: object, kind: str = "transition", **more: object) -> str:
    entry = {"seq": seq, "kind": kind, "event": "approve", "actor": "U2", "version": version}
    return json.dumps({**entry, **more})


def test_refusals_alike_but_for_their_place_are_the_same_click_twice() -> None:
    lines = [
        _line(1, 1, event="create"),
        _line(2, 2),
        _line(3, 2, kind="refused", prev="a"),
        _line(4, 2, kind="refused", prev="b"),
    ]
    assert order_problems(lines, version=2) == []


def test_a_version_that_is_not_a_number_is_left_to_the_parser() -> None:
    lines = [_line(1, 3, event="create"), _line(2, "2"), _line(3, True, event="claim")]
    assert order_problems(lines) == []


def test_each_problem_is_named_at_its_entry() -> None:
    lines = [_line(1, 1, event="create"), _line(2, 3), _line(3, 2, event="claim"), _line(4, 3)]
    found = [(b.seq, b.why.split(":")[0]) for b in order_problems(lines, version=2)]
    assert found == [
        (2, "the request stands at version 2, below version 3 its history reached at entry 2"),
        (3, "version 2 after version 3 at entry 2"),
        (4, "repeats entry 2 (approve by U2 at version 3)"),
    ]
