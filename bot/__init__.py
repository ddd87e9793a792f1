"""hitl-bot: a person keeps the last word over an AI agent's costly actions.

The names below are the supported Python API; everything else may change.
"""

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
    NotEligible,
    NotFound,
    PayloadError,
    StalePayload,
    StoreDamaged,
    StoreUnavailable,
)
from bot.store.questions import QuestionStore
from bot.store.requests import RequestStore
from bot.store.steering import SteeringStore

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
    "NotEligible",
    "NotFound",
    "PayloadError",
    "Policy",
    "Question",
    "QuestionStore",
    "ReasonCode",
    "RequestStore",
    "RiskTier",
    "StalePayload",
    "State",
    "Steering",
    "SteeringStore",
    "StoreDamaged",
    "StoreUnavailable",
    "load_policy",
]
