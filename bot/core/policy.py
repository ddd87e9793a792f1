"""The policy file: which tools need a person, at what risk, who decides, and what
happens when nobody does.

Loaded once at start and validated strictly: a mistake here would otherwise
surface as a wrong auto-approval in production, so every error names the file,
the field and the fix.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot import messages as msg
from bot.core import default_policy
from bot.core.durations import parse_duration
from bot.core.models import Level, RiskTier
from bot.core.pagers import Opsgenie, PagerDuty, pages
from bot.core.rules import Rule
from bot.core.states import State
from bot.errors import ConfigError

TIER_ORDER = (RiskTier.LOW, RiskTier.MEDIUM, RiskTier.HIGH, RiskTier.CRITICAL)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Rotation(_Strict):
    """An on-call rotation: `users` take turns of `shift`, counted from `start`."""

    users: tuple[str, ...] = Field(min_length=1)
    shift: int = 7 * 86_400_000
    start: datetime = datetime.fromisoformat("2026-01-05T09:00:00+00:00")

    _shift = field_validator("shift", mode="before")(parse_duration)

    def at(self, now_ms: int) -> str:
        turn = (now_ms - int(self.start.timestamp() * 1000)) // self.shift
        return self.users[turn % len(self.users)]


class Assignees(_Strict):
    """Who is told, and who may decide, at one level of the chain."""

    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    oncall: str | None = None
    pager_url: str | None = None  # a generic webhook (docs: "Paging the on-call engineer")
    pagerduty: PagerDuty | None = None
    opsgenie: Opsgenie | None = None
    timeout: int | None = None  # defaults to the tier's review_timeout

    _timeout = field_validator("timeout", mode="before")(
        lambda v: None if v is None else parse_duration(v)
    )

    @model_validator(mode="after")
    def _not_empty(self) -> Assignees:
        if not (self.users or self.groups or self.channels or self.oncall or pages(self)):
            raise ValueError(
                "an escalation level with nobody in it would escalate into silence; "
                "fix: give it users, groups, channels, an oncall rotation or a pager "
                "(pagerduty, opsgenie or pager_url), "
                "or remove the level"
            )
        return self


_PRINCIPAL = re.compile(r"^(\*|[UWSCG][A-Z0-9_]+|#[a-z0-9][a-z0-9_.-]*)$")
PRINCIPAL_HELP = (
    'a Slack user id (U123), a user group id (S123), a channel ("#name" or C123: its '
    'members), or "*" for anyone in the workspace'
)


def check_principals(value: tuple[str, ...]) -> tuple[str, ...]:
    for name in value:
        if not _PRINCIPAL.match(name):
            raise ValueError(f"{name!r} is not a principal; fix: write {PRINCIPAL_HELP}")
    return value


class Standing(_Strict):
    """Standing approvals a tier allows (docs/grants.md): a person approving one call may
    let similar calls pass for at most `max`, in this run, or (`scope: requester`) also
    for the whole requester."""

    max: int = Field(gt=0)
    scope: Literal["run", "requester"] = "run"

    _max = field_validator("max", mode="before")(parse_duration)


class TierPolicy(_Strict):
    review_timeout: int
    reviewers: Assignees
    escalation: tuple[Assignees, ...] = Field(default=(), max_length=10)
    on_exhausted: Literal[State.AUTO_REJECTED, State.AUTO_APPROVED] = State.AUTO_REJECTED
    approvals_required: int = Field(default=1, ge=1, le=10)
    # Empty: the members of the reviewer channels plus the people of each level reached;
    # never the whole workspace unless "*" is written here.
    approvers: tuple[str, ...] = ()
    self_approval: bool = False
    allow_edit: bool = True
    standing: Standing | None = None
    # A person's approval of this tier counts only once confirmed with their passkey
    # (docs/security.md "Step-up"): serve hosts the page, at HITL_PUBLIC_URL.
    step_up: Literal["passkey"] | None = None

    _review_timeout = field_validator("review_timeout", mode="before")(parse_duration)
    _approvers = field_validator("approvers")(check_principals)

    def deciders(self) -> tuple[str, ...]:
        """Who may decide at the first level: the `approvers` of a request of this tier."""
        return self.approvers or self.reviewers.channels

    def first_deciders(self) -> tuple[str, ...]:
        """Who may decide a new request of this tier: its approvers plus the first level's
        people (what `ActionRequest.eligible` gives at level 1), in reading order."""
        names = (*self.deciders(), *self.reviewers.users, *self.reviewers.groups)
        return tuple(dict.fromkeys(names))


class ToolPolicy(_Strict):
    tier: RiskTier | None = None
    review: Literal["required", "none"] = "required"
    rules: tuple[Rule, ...] = ()


class Verdict(BaseModel):
    tool: str
    tier: RiskTier
    review: bool


class ReplyWords(_Strict):
    """Thread replies that decide like the buttons. An approve word must be the whole
    reply; a reject word may be followed by ":" and a reason. Compared lower-case."""

    approve: tuple[str, ...] = (
        "approve", "approved", "lgtm", "yes", ":white_check_mark:", ":+1:",
    )  # fmt: skip
    reject: tuple[str, ...] = ("reject", "no", "deny", ":x:")

    @field_validator("approve", "reject")
    @classmethod
    def _words(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        words = tuple(w.strip().lower() for w in value)
        if not all(words) or any(":" in w.strip(":") for w in words):
            raise ValueError("each word must be non-empty text without ':' inside; fix it")
        return words

    @model_validator(mode="after")
    def _apart(self) -> ReplyWords:
        both = set(self.approve) & set(self.reject)
        if both:
            raise ValueError(f"{sorted(both)} cannot both approve and reject; fix: keep one")
        return self


class Policy(_Strict):
    default_tier: RiskTier = RiskTier.MEDIUM
    claim_timeout: int = 10 * 60_000
    execution_timeout: int = 15 * 60_000
    tiers: dict[RiskTier, TierPolicy]
    tools: dict[str, ToolPolicy] = {}
    oncall: dict[str, Rotation] = {}
    # Who may stop, steer and read any run and any request's audit, besides the run's
    # initiator and the approvers of its requests.
    operators: tuple[str, ...] = ()
    reply_words: ReplyWords = ReplyWords()

    _operators = field_validator("operators")(check_principals)

    _durations = field_validator("claim_timeout", "execution_timeout", mode="before")(
        parse_duration
    )

    @model_validator(mode="after")
    def _coherent(self) -> Policy:
        tiers: dict[str, TierFacts] = {
            tier.value: (
                tp.on_exhausted,
                tp.approvers,
                [lvl.oncall for lvl in (tp.reviewers, *tp.escalation)],
            )
            for tier, tp in self.tiers.items()
        }
        problems = coherence_problems(tiers, set(self.oncall))
        problems += standing_problems(self.tiers)
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def check_schema(self, tool: str, schema: dict[str, Any]) -> None:
        """Refuse rules that read an argument the tool's JSON schema does not have: such a
        rule would raise every call (fail closed) and is surely a typo."""
        tp = self.tools.get(tool)
        props = schema.get("properties")
        if tp is None or not isinstance(props, dict):
            return
        for i, rule in enumerate(tp.rules):
            if rule.argument not in props:
                known = ", ".join(sorted(props)) or "none"
                raise ConfigError(
                    f"tools.{tool}.rules.{i}: the rule {rule.condition!r} reads "
                    f"{rule.argument!r}, which {tool} does not take (its arguments: {known}); "
                    "fix: correct the argument name in the rule"
                )

    def classify(self, tool: str, args: dict[str, Any]) -> Verdict:
        """The tier a call runs at: its tool's tier, raised (never lowered) by matching rules."""
        tp = self.tools.get(tool)
        if tp is None:
            return Verdict(tool=tool, tier=self.default_tier, review=True)
        tier = tp.tier or self.default_tier
        for rule in tp.rules:
            if rule.matches(args) and TIER_ORDER.index(rule.tier) > TIER_ORDER.index(tier):
                tier = rule.tier
        review = tp.review == "required" or tier != (tp.tier or self.default_tier)
        return Verdict(tool=tool, tier=tier, review=review)

    def step_up_tiers(self) -> tuple[RiskTier, ...]:
        """The tiers whose approvals need a step-up, in order."""
        return tuple(t for t in TIER_ORDER if self.tiers[t].step_up is not None)

    def levels(self, tier: RiskTier, now_ms: int) -> tuple[Level, ...]:
        """The tier's chain with on-call rotations resolved for when each level starts."""
        tp = self.tiers[tier]
        out: list[Level] = []
        starts = now_ms
        for lvl in (tp.reviewers, *tp.escalation):
            timeout = lvl.timeout or tp.review_timeout
            users = list(lvl.users)
            if lvl.oncall:
                users.append(self.oncall[lvl.oncall].at(starts))
            out.append(
                Level(
                    timeout_ms=timeout,
                    users=tuple(users),
                    groups=lvl.groups,
                    channels=lvl.channels,
                    pager_url=lvl.pager_url,
                    pagerduty=lvl.pagerduty,
                    opsgenie=lvl.opsgenie,
                )
            )
            starts += timeout
        return tuple(out)


def load_policy(path: str | Path | None, *, setting: str | None = "HITL_POLICY") -> Policy:
    """Read and validate a policy file; None gives the built-in default. `setting`: the
    variable that named the file, for the fix (None: a file given on a command line)."""
    if path is None:
        return DEFAULT_POLICY
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except OSError as exc:
        fix = f"set {setting} to" if setting else "give the path of"
        raise ConfigError(
            f"{p}: cannot read the policy file ({exc.strerror}); fix: {fix} an existing YAML file"
        ) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {exc}; fix: correct the YAML syntax") from exc
    return parse_policy(data, source=str(p))


TierFacts = tuple[object, object, list[object]]  # on_exhausted, approvers, oncall names


def coherence_problems(tiers: dict[str, TierFacts], oncall: set[str]) -> list[str]:
    """What makes a policy unsafe across its fields, from plain values: the model's own
    check, and `parse_policy`'s when fields are wrong too (pydantic then skips the
    model's check, and a second run would show these only after the first fixes)."""
    missing = [t.value for t in TIER_ORDER if t.value not in tiers]
    problems = [f"tiers {missing} are missing; fix: define all four tiers"] if missing else []
    for tier, (on_exhausted, approvers, oncalls) in tiers.items():
        if on_exhausted == State.AUTO_APPROVED.value and tier != RiskTier.LOW.value:
            problems.append(
                f"tiers.{tier}.on_exhausted: auto_approved is allowed for low risk "
                "only; fix: set it to auto_rejected"
            )
        if tier in (RiskTier.HIGH.value, RiskTier.CRITICAL.value) and not approvers:
            problems.append(
                f"tiers.{tier}.approvers: a {tier} tier must name who may "
                "approve; fix: list Slack user ids (U123), user group ids (S123) or a "
                'channel whose members may approve ("#leads"), e.g. approvers: '
                '["S0FINANCE"] (or write "*" to allow anyone in the workspace)'
            )
        for name in oncalls:
            if name and name not in oncall:
                problems.append(
                    f"tiers.{tier}: oncall rotation {name!r} is not defined; "
                    "fix: add it under 'oncall:'"
                )
    return problems


def standing_problems(tiers: dict[RiskTier, TierPolicy]) -> list[str]:
    """Where a standing approval would let one person stand for more than one decision."""
    problems = []
    for tier, tp in tiers.items():
        if tp.standing is None:
            continue
        if tp.step_up is not None:
            # A grant would pass later calls with no one's passkey at all.
            problems.append(
                f"tiers.{tier.value}.standing: every approval of a tier with step_up is "
                "confirmed with a passkey, one call at a time; fix: remove 'standing' or "
                "'step_up' from this tier"
            )
        elif tier == RiskTier.CRITICAL:
            problems.append(
                "tiers.critical.standing: a critical call is decided one at a time; "
                "fix: remove 'standing' from the critical tier"
            )
        elif tp.approvals_required > 1:
            problems.append(
                f"tiers.{tier.value}.standing: one person's grant would pass calls that "
                f"need {tp.approvals_required} approvals; fix: remove 'standing' or set "
                "approvals_required: 1"
            )
    return problems


def _raw_coherence(data: dict[Any, Any]) -> list[str]:
    """`coherence_problems` read from the file's plain data, as far as it has a shape."""
    raw = data.get("tiers")
    if not isinstance(raw, dict):
        return []
    tiers: dict[str, TierFacts] = {}
    for name, tp in raw.items():
        # Any shape may stand where a field is wrong (pydantic names those): read only
        # what has the shape the check needs, never raise on the rest.
        tp = tp if isinstance(tp, dict) else {}
        chain = tp.get("escalation")
        levels = [tp.get("reviewers"), *(chain if isinstance(chain, list) else [])]
        oncalls: list[object] = [
            lvl.get("oncall")
            for lvl in levels
            if isinstance(lvl, dict) and isinstance(lvl.get("oncall"), str)
        ]
        on_exhausted = tp.get("on_exhausted", State.AUTO_REJECTED.value)
        tiers[str(name)] = (on_exhausted, tp.get("approvers"), oncalls)
    oncall = data.get("oncall")
    return coherence_problems(tiers, set(oncall) if isinstance(oncall, dict) else set())


# Errors whose input is the enclosing mapping, or absent: nothing of the person's to quote.
_NO_INPUT = frozenset({"missing", "extra_forbidden", "value_error", "assertion_error"})


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _shown(value: object) -> str:
    """A value as written in the file, cut so one wrong field cannot flood the report."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:59] + "…"


def parse_policy(data: object, *, source: str = "<policy>") -> Policy:
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: a policy is a mapping with 'tiers' and 'tools'; fix: start with 'tiers:'"
        )
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(x) for x in err["loc"]) or "(top level)"
            text = err["msg"].removeprefix("Value error, ")
            if err["type"] == "enum" and ("tier" in field or field.startswith("tiers.")):
                text = msg.POLICY_NOT_A_TIER.format(value=_shown(err["input"]))
            elif err["type"] not in _NO_INPUT and _scalar(err["input"]):
                # pydantic's sentence says what it wanted, never what it got.
                text = msg.POLICY_GOT.format(problem=text, value=_shown(err["input"]))
            if err["type"] == "extra_forbidden":
                text = f"unknown field; fix: remove it or check its spelling ({field})"
            problems.append(f"{source}: {field}: {text}")
        if all(err["loc"] for err in exc.errors()):  # the model's own check did not run
            problems += [f"{source}: {p}" for p in _raw_coherence(data)]
        raise ConfigError("\n".join(problems)) from None


DEFAULT_POLICY: Policy = parse_policy(
    yaml.safe_load(default_policy.TEXT), source="built-in default"
)
