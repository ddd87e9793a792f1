"""The id of each kind: its format (stored data relies on it) and how it is recognised."""

from __future__ import annotations

import hashlib
import itertools

from bot.core import ids


def test_keyed_ids_keep_their_stored_format() -> None:
    scoped = hashlib.sha256(b"api\x00run-1:c1").hexdigest()
    assert ids.keyed_request_id("run-1:c1", "api") == "k" + scoped[:15]
    assert ids.keyed_question_id("run-1:c1") == "q" + hashlib.sha256(b"run-1:c1").hexdigest()[:16]


def test_a_keyed_request_id_is_as_long_as_a_random_one_and_never_equals_it() -> None:
    keyed, fresh = ids.keyed_request_id("key", "owner"), ids.new_request_id()
    assert len(keyed) == len(fresh) == ids.DIGITS
    assert all(c in "0123456789abcdef" for c in fresh) and keyed[0] == "k"


def test_the_same_key_of_two_owners_names_two_requests() -> None:
    assert ids.keyed_request_id("key", "a") != ids.keyed_request_id("key", "b")


def test_ids_take_their_random_part_from_the_factory() -> None:
    counter = (f"{n:016x}" for n in itertools.count(1))
    assert ids.new_request_id(lambda: next(counter)) == "0000000000000001"
    assert ids.new_question_id(lambda: next(counter)) == "q0000000000000002"
    assert ids.new_run_id(lambda: next(counter)) == "run-0000000000000003"
    assert ids.new_steering_id(lambda: next(counter)) == "0000000000000004"


def test_question_ids_are_told_from_request_ids() -> None:
    assert ids.is_question_id(ids.new_question_id())
    assert ids.is_question_id(ids.keyed_question_id("run-1:c1"))
    assert not ids.is_question_id(ids.new_request_id())
    assert not ids.is_question_id(ids.keyed_request_id("run-1:c1", "api"))


def test_run_ids_are_recognised() -> None:
    assert ids.is_run_id(ids.new_run_id())
    assert not ids.is_run_id(ids.new_request_id()) and not ids.is_run_id(ids.new_question_id())
