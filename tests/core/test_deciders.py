"""Who may decide: one rule (bot/core/deciders.py), the machine's and Slack's alike.

The rule's cases people rely on, a seeded property holding the machine to it for every
decision, and a check that no module restates it: a second copy is the one that drifts
(Slack's used to refuse a requester withdrawing their own call, which the machine allows).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.deciders import Verdict, who_may_decide
from bot.core.machine import apply
from bot.core.models import ActionRequest, Decision
from bot.core.policy import parse_policy
from bot.core.proposal import propose
from bot.core.states import Event
from bot.errors import NotEligible

ROOT = Path(__file__).resolve().parents[2]


def _request(
    approvers: list[str], *, self_approval: bool = False, behalf: str | None = None
) -> ActionRequest:
    policy = parse_policy(
        {
            "tiers": {
                t: {
                    "review_timeout": "10m",
                    "reviewers": {"users": ["UREV"]},
                    "approvers": approvers,
                    "self_approval": self_approval,
                }
                for t in ("low", "medium", "high", "critical")
            },
            "tools": {"refund": {"tier": "medium"}},
        }
    )
    req, _ = propose(
        policy,
        request_id="r1",
        tool="refund",
        args={"amount": 5},
        requester="UAGENT",
        now=0,
        on_behalf_of=behalf,
    )
    return req


def test_the_cases_people_rely_on() -> None:
    named = _request(["UBOSS", "SFINANCE"], behalf="UCAROL")
    assert who_may_decide(named, "UBOSS") == Verdict.MAY
    assert who_may_decide(named, "UCAROL", ["SFINANCE"]) == Verdict.OWN  # asked for her
    assert who_may_decide(named, "UCAROL", event=Event.REJECT) == Verdict.MAY  # withdraws
    assert who_may_decide(named, "UDAVE", ["SFINANCE"]) == Verdict.MAY  # by the group
    assert who_may_decide(named, "UDAVE") == Verdict.NOT_DECIDER
    anyone = _request(["*"])
    assert who_may_decide(anyone, "UDAVE") == Verdict.MAY
    assert who_may_decide(anyone, "UGUEST", foreign=True) == Verdict.NOT_DECIDER
    assert who_may_decide(_request(["*"], self_approval=True), "UAGENT") == Verdict.MAY


PRINCIPALS = st.sampled_from(["*", "UA", "UB", "SG1", "SG2", "UAGENT", "UCAROL"])
EVENTS = st.sampled_from([Event.APPROVE, Event.REJECT, Event.EDIT_AND_APPROVE])


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    approvers=st.lists(PRINCIPALS, min_size=1, max_size=3, unique=True),
    self_approval=st.booleans(),
    behalf=st.sampled_from([None, "UCAROL"]),
    actor=st.sampled_from(["UA", "UB", "UAGENT", "UCAROL", "UZ"]),
    groups=st.lists(st.sampled_from(["SG1", "SG2"]), max_size=2, unique=True),
    event=EVENTS,
    foreign=st.booleans(),
)
def test_the_machine_refuses_exactly_whom_the_rule_refuses(**kw: Any) -> None:
    req = _request(kw["approvers"], self_approval=kw["self_approval"], behalf=kw["behalf"])
    verdict = who_may_decide(
        req, kw["actor"], kw["groups"], event=kw["event"], foreign=kw["foreign"]
    )
    d = Decision(
        event=kw["event"],
        actor=kw["actor"],
        actor_groups=tuple(kw["groups"]),
        foreign=kw["foreign"],
        payload_hash=req.payload_hash,
        new_args={"amount": 4} if kw["event"] == Event.EDIT_AND_APPROVE else None,
        reason_code="other" if kw["event"] == Event.REJECT else None,
    )
    try:
        apply(req, d, 1)
        refused = None
    except NotEligible as exc:
        refused = exc
    assert (refused is None) == (verdict == Verdict.MAY), (verdict, refused)
    if refused is not None:
        assert refused.own == (verdict == Verdict.OWN)


# Restating the rule: a check of self_approval, or of the requester against a decision.
_RESTATED = re.compile(r"\.self_approval\b(?!\s*[,)\]])|is_requester\([^)]*\)\s+and\s+not")


def test_no_module_but_the_rule_says_who_may_decide() -> None:
    # The rule, the model that holds the field, and the codec that stores it.
    allowed = {"bot/core/deciders.py", "bot/core/models.py", "bot/store/codec.py"}
    found = []
    for path in (ROOT / "bot").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if rel not in allowed and _RESTATED.search(code):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "who may decide restated outside bot/core/deciders.py:\n" + "\n".join(found)
