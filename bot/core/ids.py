"""The ids hitl-bot mints, one function per kind, and how each kind is told apart.

    request   16 random hex digits, or "k" + 15 hex digits of a hash of the requester and
              its idempotency key ("k" is no hex digit: a keyed id never equals a random one)
    question  "q" + 16 hex digits, random or hashed from the worker's run and tool call
    run       "run-" + 16 random hex digits (a worker's run; outside agents name their own)
    steering  16 random hex digits

A run's `waiting_on` holds a request id or a question id: `is_question_id` tells which.
The random part comes from an injected `IdFactory` (`bot.clock.new_id` in production,
a counter in tests), so every id a test sees is predictable.
"""

from __future__ import annotations

import hashlib

from bot.clock import IdFactory, new_id

QUESTION_PREFIX = "q"
KEYED_REQUEST_PREFIX = "k"
RUN_PREFIX = "run-"
DIGITS = 16  # hex digits in a random id (`new_id`) and in a hashed question id


def _digest(material: str, digits: int) -> str:
    return hashlib.sha256(material.encode()).hexdigest()[:digits]


def new_request_id(ids: IdFactory = new_id) -> str:
    """A fresh request id."""
    return ids()


def keyed_request_id(idempotency_key: str, owner: str) -> str:
    """The request id an idempotency key names, so a retry lands on the same request;
    scoped to the owner, so another identity's same key makes or meets only its own.
    As long as a random id: the prefix takes one hex digit's place."""
    return KEYED_REQUEST_PREFIX + _digest(f"{owner}\x00{idempotency_key}", DIGITS - 1)


def new_question_id(ids: IdFactory = new_id) -> str:
    """A fresh question id."""
    return QUESTION_PREFIX + ids()


def keyed_question_id(idempotency_key: str) -> str:
    """The question id a worker's tool call names, so a restarted worker finds the
    question it already asked instead of asking again."""
    return QUESTION_PREFIX + _digest(idempotency_key, DIGITS)


def new_run_id(ids: IdFactory = new_id) -> str:
    """A fresh id for a run a worker carries out."""
    return RUN_PREFIX + ids()


def new_steering_id(ids: IdFactory = new_id) -> str:
    """A fresh id for a correction queued for a run."""
    return ids()


def is_question_id(item_id: str) -> bool:
    """A question's id rather than a request's (the two kinds a run may wait on)."""
    return item_id.startswith(QUESTION_PREFIX)


def is_run_id(item_id: str) -> bool:
    """An id a worker minted for a run (outside agents' run ids are not recognised)."""
    return item_id.startswith(RUN_PREFIX)
