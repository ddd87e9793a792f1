"""The pydantic models every part shares. Times are integer epoch milliseconds."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.core.pagers import Opsgenie, PagerDuty
from bot.core.proof.chain import expand
from bot.core.states import Event, ReasonCode, State

SYSTEM = "system"  # the actor name for the sweeper, the policy and the executor
# The identity that owns the runs people start in Slack, and what their worker files.
# No API token may bear it (bot/config.py), so no agent can reach those runs' work.
WORKER = "worker"


class RiskTier(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class Level(BaseModel):
    """One rung of an escalation chain, resolved to concrete principals at creation."""

    model_config = ConfigDict(frozen=True)

    timeout_ms: int = Field(gt=0)
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    pager_url: str | None = None
    pagerduty: PagerDuty | None = None
    opsgenie: Opsgenie | None = None


class Approval(BaseModel):
    model_config = ConfigDict(frozen=True)

    actor: str
    at: int
    seal: str | None = None  # serve's signature of this approval (bot/core/proof/seal.py)


class Resolution(BaseModel):
    """Who moved the request out of review, when, how, and on what they saw."""

    model_config = ConfigDict(frozen=True)

    actor: str
    at: int
    event: Event
    reason_code: str | None = None
    text: str | None = None
    view_hash: str | None = None
    seal: str | None = None  # serve's signature of this decision (bot/core/proof/seal.py)


class ActionRequest(BaseModel):
    """One gated tool call and everything needed to decide it without the policy file."""

    model_config = ConfigDict(frozen=True)

    id: str
    tool: str
    args: dict[str, Any]
    payload_hash: str
    original_hash: str | None = None  # set when edit-and-approve replaced the args
    # What the agent asked for before a person's edit: the card shows it beside the edit.
    original_args: dict[str, Any] | None = None
    run_id: str | None = None
    requester: str  # the agent or service that asked (from its credential, never its body)
    # The API identity whose work this is (the token's, or the run's owner for what the
    # worker files): only it (and the API operators) may see or touch it over the API.
    owner: str = ""
    on_behalf_of: str | None = None  # the person the agent acts for; may not approve either
    channel: str | None = None
    risk: RiskTier
    created_at: int
    state: State
    version: int = 1
    expires_at: int | None = None  # None only in a final state
    level: int = 0
    levels: tuple[Level, ...]
    # user ids, group ids, channels ("#name", C…: their members), or "*" for anyone
    approvers: tuple[str, ...] = ("*",)
    quorum: int = 1
    self_approval: bool = False
    allow_edit: bool = False
    on_exhausted: State = State.AUTO_REJECTED
    claim_timeout_ms: int = 10 * 60_000
    execution_timeout_ms: int = 15 * 60_000
    approvals: tuple[Approval, ...] = ()
    resolution: Resolution | None = None
    detail: str | None = None  # the executor's last report
    # "<version>.<claim token>" of the claim that holds it (bot/core/proof/fence.py): the
    # executor's fencing token, which its report shows; None until claimed
    fence: str | None = None
    idempotency_key: str | None = None
    audit_head: str = ""
    # A proposal's candidate calls (bot/core/candidates.py); empty for a single call.
    candidates: tuple[dict[str, Any], ...] = ()

    def eligible(self) -> frozenset[str]:
        """Principals who may decide now: the approvers plus every level reached so far."""
        names = set(self.approvers)
        for lvl in self.levels[: self.level + 1]:
            names.update(lvl.users)
            names.update(lvl.groups)
        return frozenset(names)

    def deciders(self) -> tuple[str, ...]:
        """`eligible()` in reading order: the approvers first, then each level's people."""
        names = list(self.approvers)
        for lvl in self.levels[: self.level + 1]:
            names += [*lvl.users, *lvl.groups]
        return tuple(dict.fromkeys(names))

    def is_requester(self, actor: str) -> bool:
        """The agent that asked, or the person it asked for: neither approves it alone."""
        return actor == self.requester or (
            self.on_behalf_of is not None and actor == self.on_behalf_of
        )

    @property
    def assignees(self) -> Level:
        return self.levels[min(self.level, len(self.levels) - 1)]


# The most a decision's `text` (a person's reason) or `detail` (an executor's report)
# holds: what one Slack section shows.
DETAIL_MAX = 3000


def clip(text: str, limit: int = DETAIL_MAX) -> str:
    """`text` if it fits in `limit` characters, else its start and "…", `limit` in all."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Decision(BaseModel):
    """An event with its context, as a caller submits it to the machine or the store."""

    model_config = ConfigDict(frozen=True)

    event: Event
    actor: str = SYSTEM
    actor_groups: tuple[str, ...] = ()
    # The actor is from another workspace (Slack Connect): "*" never counts for them,
    # only their own user id named among the deciders does.
    foreign: bool = False
    payload_hash: str | None = None  # the hash the person saw; required for human events
    view_hash: str | None = None  # hash of the rendered message the person saw
    reason_code: ReasonCode | str | None = None
    text: str | None = Field(default=None, max_length=DETAIL_MAX)
    new_args: dict[str, Any] | None = None  # edit-and-approve only
    fence: int | None = None  # the version a timer was armed at; stale timers are no-ops
    detail: str | None = Field(default=None, max_length=DETAIL_MAX)
    has_compensation: bool = False
    # An executor's claim: its own token (the same on a retry of the same claim; None:
    # the store picks one). Its report: the `fence` its claim handed it (None: unfenced).
    claim_token: str | None = None
    claim_fence: str | None = None
    via: str | None = None  # how a person decided, when not by button: "thread_reply:C…:ts"


class AuditEntry(BaseModel):
    """One line of a request's hash-chained history, exactly as stored."""

    model_config = ConfigDict(frozen=True)

    seq: int
    at: int
    actor: str
    kind: str  # "transition" or "refused"
    event: str
    from_state: str | None = None
    to_state: str | None = None
    reason_code: str | None = None
    text: str | None = None
    payload_hash: str | None = None
    view_hash: str | None = None
    via: str | None = None
    fence: str | None = None  # a claim's, or the stale one a refused report held
    version: int
    prev: str = ""  # only a first entry's is put back (GENESIS); a later one missing is a break
    raw: str = Field(exclude=True, default="")

    @classmethod
    def parse(cls, raw: str) -> AuditEntry:
        data = expand(json.loads(raw))  # what storage leaves out reads as before
        return cls.model_validate(
            {
                **data,
                "from_state": data.get("from") or None,
                "to_state": data.get("to") or None,
                "raw": raw,
            }
        )


class QuestionState(StrEnum):
    OPEN = "open"  # posted, nobody answered yet
    ANSWERED = "answered"  # first answer won (final)
    EXPIRED = "expired"  # nobody answered in time (final)
    CANCELLED = "cancelled"  # the run was stopped (final)


class Question(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    run_id: str | None = None
    question: str
    channel: str | None = None
    owner: str = ""  # the identity that asked (ActionRequest.owner); "" read from before
    # The answers a person picks from (bot.core.choices); empty: any text answers.
    options: tuple[str, ...] = ()
    asked_at: int
    expires_at: int
    state: QuestionState = QuestionState.OPEN
    version: int = 1
    answer: str | None = None
    answered_by: str | None = None
    answered_at: int | None = None


class Steering(BaseModel):
    """A correction queued for a run; consumed at most once by the agent's next tool call."""

    model_config = ConfigDict(frozen=True)

    id: str
    run_id: str
    text: str = Field(min_length=1, max_length=4000)
    actor: str
    at: int
    hard_stop: bool = False
    source: str | None = None  # "channel:ts" of the Slack message it came from, for reactions


class RunState(StrEnum):
    QUEUED = "queued"  # waiting for a worker
    RUNNING = "running"  # a worker is calling the model or a tool
    WAITING = "waiting"  # blocked on a person: an approval or a question
    FINISHED = "finished"  # the model gave its final answer (final)
    STOPPED = "stopped"  # a person pressed the hard stop (final)
    FAILED = "failed"  # the model or the worker failed for good (final)
    TURN_LIMIT = "turn_limit"  # the run used every turn it was allowed (final)


RUN_FINAL = frozenset({RunState.FINISHED, RunState.STOPPED, RunState.FAILED, RunState.TURN_LIMIT})


class Run(BaseModel):
    """One agent run: where it lives in Slack and how far it got."""

    model_config = ConfigDict(frozen=True)

    id: str
    agent: str
    prompt: str
    requester: str
    owner: str = ""  # the identity that started it (ActionRequest.owner); WORKER from Slack
    channel: str | None = None
    thread_ts: str | None = None  # the run's home thread in Slack
    state: RunState = RunState.QUEUED
    created_at: int
    updated_at: int
    turns: int = 0
    waiting_on: str | None = None  # the request or question id the run is blocked on
    result: str | None = None
    error: str | None = None
    stop_requested: bool = False
    # An agent of its own (SDK, HTTP, MCP, Claude Code) gating its calls under this run
    # id: no worker runs it, so a stop ends it at once.
    outside: bool = False
