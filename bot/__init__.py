"""hitl-bot: a person keeps the last word over an AI agent's costly actions.

The names below are the supported Python API; everything else may change.
The stores load on first use, so importing `bot.sdk` (which runs this file) in an
agent that speaks HTTP does not bring in Redis.
"""

import importlib
from typing import TYPE_CHECKING

from bot.core.models import ActionRequest, AuditEntry, Decision, Question, RiskTier, Steering
from bot.core.policy import Policy, load_policy
from bot.core.states import Event, ReasonCode, State
from bot.errors import (
    AlreadyResolved,
    ConfigError,
    Expired,
    Forbidden,
    ForgedDecision,
    HitlError,
    IdempotencyConflict,
    InvalidTransition,
    NotAnOption,
    NotEligible,
    NotFound,
    NotReplicated,
    PayloadError,
    PortInUse,
    StaleFence,
    StalePayload,
    StoreDamaged,
    StoreUnavailable,
    TooManyWaiting,
    UnconfirmedCreate,
)

if TYPE_CHECKING:
    from bot.store.requests import RequestStore
    from bot.store.run.questions import QuestionStore
    from bot.store.run.steering import SteeringStore

else:
    _STORES = {
        "QuestionStore": "bot.store.run.questions",
        "RequestStore": "bot.store.requests",
        "SteeringStore": "bot.store.run.steering",
    }

    # Hidden from type checkers, which see the imports above: a misspelt name still
    # fails `mypy` in the caller instead of becoming Any.
    def __getattr__(name: str) -> object:
        where = _STORES.get(name)
        if where is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        store = getattr(importlib.import_module(where), name)
        globals()[name] = store  # later lookups find it without this function
        return store


__all__ = [
    "ActionRequest",
    "AlreadyResolved",
    "AuditEntry",
    "ConfigError",
    "Decision",
    "Event",
    "Expired",
    "Forbidden",
    "ForgedDecision",
    "HitlError",
    "IdempotencyConflict",
    "InvalidTransition",
    "NotAnOption",
    "NotEligible",
    "NotFound",
    "NotReplicated",
    "PayloadError",
    "Policy",
    "PortInUse",
    "Question",
    "QuestionStore",
    "ReasonCode",
    "RequestStore",
    "RiskTier",
    "StaleFence",
    "StalePayload",
    "State",
    "Steering",
    "SteeringStore",
    "StoreDamaged",
    "StoreUnavailable",
    "TooManyWaiting",
    "UnconfirmedCreate",
    "load_policy",
]
