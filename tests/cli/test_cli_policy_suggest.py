"""`hitl-bot policy suggest` mines a seeded month, as a real process against the test
Valkey: about 500 requests made and decided through the store's own create and
transitions, on a clock that starts twenty days ago, with waits drawn from a seeded
generator. Each suggestion's bounds, evidence and effect are checked against what was
seeded, and its fragment against `policy diff` and the policy it would make; each
refusal (critical, a quorum, a rejection, an edit inside the bounds, too slow, too few,
already low) names its reason."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from redis.asyncio import Redis

from bot.core.hindsight.verdicts import Call, judge
from bot.core.policy import Policy, parse_policy
from bot.core.states import Event
from tests.cli.test_cli import cli
from tests.support.month import MIN, SEC, Month, Seeded


def _tier(timeout: str, **extra: Any) -> dict[str, Any]:
    return {"review_timeout": timeout, "reviewers": {"channels": ["#approvals"]}, **extra}


POLICY: dict[str, Any] = {
    "tiers": {
        "low": _tier("1h", on_exhausted="auto_approved"),
        "medium": _tier("30m"),
        "high": _tier("30m", approvers=["UBOSS"]),
        "critical": _tier("5m", approvers=["#leads"], approvals_required=2),
    },
    "tools": {
        "refund": {"tier": "medium", "rules": [{"if": "amount > 1000", "tier": "high"}]},
        "wire": {"tier": "high"},
        "deploy": {"tier": "critical"},
        "send_note": {"tier": "low"},
    },
}


async def _month(redis: Redis) -> Seeded:
    m = Month(redis, parse_policy(POLICY))
    r = m.rng
    people = ["UALICE", "UBOB"]
    # Small refunds by billing-agent: always approved within seconds...
    for _ in range(240):
        args = {"amount": r.randint(2, 48), "currency": r.choice(["USD", "EUR"])}
        await m.call("refund", "refund", "billing-agent", args, Event.APPROVE,
                     r.choice(people), r.randint(2, 20) * SEC)  # fmt: skip
    # ...three large ones rejected, outside what was approved.
    for amount in (600, 750, 900):
        await m.call("refund", "refund", "billing-agent", {"amount": amount, "currency": "USD"},
                     Event.REJECT, "UALICE", 40 * SEC)  # fmt: skip
    # A few refunds by another agent, inside those bounds: the suggestion moves them too.
    for _ in range(5):
        args = {"amount": r.randint(10, 30), "currency": "USD"}
        await m.call("support", "refund", "support-agent", args, Event.APPROVE, "UBOB", 5 * SEC)
    # Credits, quick approvals but one rejected inside their range.
    for i in range(61):
        event = Event.REJECT if i == 30 else Event.APPROVE
        await m.call("credit", "credit", "billing-agent", {"amount": 10 + i}, event,
                     "UCAROL" if i == 30 else "UBOB", 3 * SEC)  # fmt: skip
    # Discounts, one of them edited before approval.
    for i in range(30):
        edit = {"percent": 5} if i == 7 else None
        await m.call("discount", "discount", "shop-agent", {"percent": 5 + i % 10},
                     Event.EDIT_AND_APPROVE if edit else Event.APPROVE, "UDAN", 4 * SEC,
                     new_args=edit)  # fmt: skip
    # Wires at high, approved by the named approver at once.
    for _ in range(40):
        await m.call("wire", "wire", "treasury-agent", {"amount": r.randint(100, 5000)},
                     Event.APPROVE, "UBOSS", r.randint(5, 30) * SEC)  # fmt: skip
    # Row deletions: the big ones are rejected.
    for i in range(40):
        rows = 50 * (i + 1)  # 50 .. 2000
        event = Event.REJECT if rows >= 1200 else Event.APPROVE
        await m.call("delete", "delete_rows", "cleanup-agent", {"rows": rows}, event,
                     "UALICE", 30 * SEC)  # fmt: skip
    # Critical deploys, two approvers each, quickly.
    for i in range(25):
        await m.call("deploy", "deploy", "ci-agent", {"version": f"1.{i}"}, Event.APPROVE,
                     "ULEAD1", 10 * SEC, groups=("#leads",), second="ULEAD2")  # fmt: skip
    # Notes already at low; exports people take their time over; too few lookups.
    for _ in range(30):
        await m.call("note", "send_note", "notes-agent", {"text": "hi"}, Event.APPROVE,
                     "UBOB", 3 * SEC)  # fmt: skip
    for _ in range(25):
        await m.call("export", "export", "data-agent", {"table": "users"}, Event.APPROVE,
                     "UALICE", 10 * MIN)  # fmt: skip
    for i in range(5):
        await m.call("lookup", "lookup", "data-agent", {"id": i}, Event.APPROVE, "UBOB", 2 * SEC)
    return m.seen


def _median(waits: list[int]) -> int:
    ranked = sorted(waits)
    return ranked[math.ceil(len(ranked) / 2) - 1]


def _merged(fragment: dict[str, Any], base: dict[str, Any] = POLICY) -> dict[str, Any]:
    policy = copy.deepcopy(base)
    policy["tools"].update(fragment["tools"])
    return policy


def _runs(policy: Policy, tool: str, args: dict[str, Any], requester: str = "x") -> bool:
    """Whether `policy` lets the call run without a person."""
    return not judge(policy, Call(tool=tool, args=args, requester=requester, at=0)).review


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(POLICY, sort_keys=False))
    return path


async def test_a_month_of_decisions_gives_bounded_suggestions_and_says_why_not(
    redis: Redis, redis_url: str, policy_file: Path, tmp_path: Path
) -> None:
    seen = await _month(redis)
    out_file = tmp_path / "suggested.yaml"
    code, out, err = await cli("policy", "suggest", "--since", "30d", "--policy",
                               str(policy_file), "--out", str(out_file), "--json",
                               redis_url=redis_url)  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    assert got["requests"] == sum(len(v) for v in seen.ids.values())
    made = {(s["tool"], s["requester"]): s for s in got["suggestions"]}
    assert set(made) == {
        ("refund", "billing-agent"), ("wire", "treasury-agent"), ("delete_rows", "cleanup-agent"),
    }  # fmt: skip

    # Small refunds: no review inside exactly what was approved, medium outside.
    refund = made[("refund", "billing-agent")]
    amounts = [a["amount"] for a in seen.args["refund"]]
    assert (refund["kind"], refund["tier"], refund["new_tier"]) == ("no_review", "medium", "low")
    bounds = {b["argument"]: b for b in refund["bounds"]}
    assert (bounds["amount"]["low"], bounds["amount"]["high"]) == (min(amounts), max(amounts))
    assert bounds["currency"]["values"] == ["EUR", "USD"]
    assert refund["loose"] == []
    ev = refund["evidence"]
    assert (ev["requests"], ev["approved"], ev["rejected"], ev["edited"]) == (243, 240, 3, 0)
    assert ev["rejection_rate"] == pytest.approx(3 / 243) and ev["edit_rate"] == 0
    assert ev["median_ms"] == _median(seen.waits["refund"])
    assert dict(ev["deciders"]) == seen.deciders["refund"]
    # Its effect is policy diff's: every seeded approval inside the bounds (support-agent's
    # too, since the policy names tools, not requesters) would have run at once.
    inside = set(seen.ids["refund"][:240]) | set(seen.ids["support"])
    assert set(refund["effect"]["to_auto"]) == inside
    assert refund["effect"]["review"] == {"dropped": 245, "added": 0}
    assert refund["effect"]["to_person"] == []
    assert refund["moved_requesters"] == {"billing-agent": 240, "support-agent": 5}
    new_policy = _merged(refund["fragment"])
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(new_policy, sort_keys=False))
    code, out, err = await cli("policy", "diff", str(policy_file), str(tmp_path / "new.yaml"),
                               "--since", "30d", "--json", redis_url=redis_url)  # fmt: skip
    assert code == 0, err
    assert {c["request_id"] for c in json.loads(out)["to_auto"]} == inside
    # Never beyond the bounds: one more than the largest amount approved, one less than
    # the smallest, another currency, a missing argument: all reviewed at medium as today.
    applied = parse_policy(new_policy)
    top, bottom = max(amounts), min(amounts)
    assert _runs(applied, "refund", {"amount": top, "currency": "EUR"})
    assert _runs(applied, "refund", {"amount": bottom, "currency": "USD"})
    for args in (
        {"amount": top + 1, "currency": "USD"},
        {"amount": bottom - 1, "currency": "USD"},
        {"amount": -top, "currency": "USD"},
        {"amount": 10, "currency": "GBP"},
        {"amount": 10},
    ):
        assert not _runs(applied, "refund", args), args
        assert judge(applied, Call("refund", args, "x", 0)).tier.value == "medium"
    assert (
        judge(applied, Call("refund", {"amount": 5000, "currency": "USD"}, "x", 0)).tier.value
        == "high"
    )

    # Wires at high: reviewed at medium up to the largest approved, high above.
    wire = made[("wire", "treasury-agent")]
    wires = [a["amount"] for a in seen.args["wire"]]
    assert (wire["kind"], wire["new_tier"]) == ("lower_tier", "medium")
    assert wire["fragment"]["tools"]["wire"] == {
        "tier": "medium",
        "rules": [
            {"if": f"amount > {max(wires)}", "tier": "high"},
            {"if": f"amount < {min(wires)}", "tier": "high"},
        ],
    }
    assert wire["effect"]["to_auto"] == [] and wire["effect"]["review"]["dropped"] == 0

    # Deletions people often reject: high from the smallest rejected count of rows.
    delete = made[("delete_rows", "cleanup-agent")]
    assert (delete["kind"], delete["new_tier"], delete["above"]) == (
        "stricter",
        "high",
        ["rows", 1200],
    )
    assert delete["evidence"]["rejected"] == 17 and delete["evidence"]["approved"] == 23
    assert delete["fragment"]["tools"]["delete_rows"] == {
        "tier": "medium", "rules": [{"if": "rows >= 1200", "tier": "high"}],
    }  # fmt: skip

    # The refusals, each with its reason.
    why = {(r["tool"], r["requester"]): r for r in got["not_suggested"]}
    assert why[("deploy", "ci-agent")]["why"] == "critical"
    credit = why[("credit", "billing-agent")]
    assert (credit["why"], credit["request_id"], credit["actor"]) == (
        "rejected_inside", seen.ids["credit"][30], "UCAROL",
    )  # fmt: skip
    discount = why[("discount", "shop-agent")]
    assert (discount["why"], discount["request_id"]) == ("edited_inside", seen.ids["discount"][7])
    assert why[("send_note", "notes-agent")]["why"] == "lowest"
    assert why[("export", "data-agent")]["why"] == "slow"
    assert why[("lookup", "data-agent")]["why"] == "too_few"
    assert why[("refund", "support-agent")]["why"] == "too_few"

    # The file holds every suggested tool's entry, and makes a policy `policy check` takes.
    written = yaml.safe_load(out_file.read_text())
    assert set(written["tools"]) == {"refund", "wire", "delete_rows"}
    assert written["tools"]["refund"] == refund["fragment"]["tools"]["refund"]
    (tmp_path / "all.yaml").write_text(yaml.safe_dump(_merged(written), sort_keys=False))
    code, _, err = await cli("policy", "check", str(tmp_path / "all.yaml"), redis_url=redis_url)
    assert code == 0, err
    assert "Nothing here is in effect" in out_file.read_text()
    assert "hitl-bot policy apply THIS_FILE --by NAME" in out_file.read_text()

    # Printed for a person: the evidence, the effect, the fragment, and with --explain why not.
    code, out, err = await cli("policy", "suggest", "--policy", str(policy_file), "--explain",
                               redis_url=redis_url)  # fmt: skip
    assert code == 0, err
    assert "1. refund by billing-agent (medium): run without review inside the bounds" in out
    assert "243 requests; 240 approved as asked, 3 rejected (1%), 0 edited (0%)" in out
    assert f"amount from {min(amounts)} to {max(amounts)}; currency one of EUR, USD" in out
    assert "245 decided by a person would have been resolved without one" in out
    assert "it moves the calls of billing-agent 240, support-agent 5" in out
    assert f"request {seen.ids['credit'][30]} inside the bounds was rejected by UCAROL" in out
    assert "critical calls are decided one at a time" in out

    # A quorum on the tier: nothing is offered across it.
    quorum = copy.deepcopy(POLICY)
    quorum["tiers"]["medium"]["approvals_required"] = 2
    (tmp_path / "quorum.yaml").write_text(yaml.safe_dump(quorum, sort_keys=False))
    code, out, err = await cli("policy", "suggest", "--policy", str(tmp_path / "quorum.yaml"),
                               "--json", redis_url=redis_url)  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    assert ("refund", "billing-agent") not in {
        (s["tool"], s["requester"]) for s in got["suggestions"]
    }
    why = {(r["tool"], r["requester"]): r for r in got["not_suggested"]}
    assert why[("refund", "billing-agent")]["why"] == "quorum"
    # ...nor a stricter rule: the tier's calls are already decided by several people.
    assert why[("delete_rows", "cleanup-agent")]["why"] == "quorum"
    assert all(s["tier"] != "medium" for s in got["suggestions"])


async def test_an_empty_month_says_so(redis: Redis, redis_url: str, policy_file: Path) -> None:
    code, out, _ = await cli("policy", "suggest", "--policy", str(policy_file), redis_url=redis_url)
    assert code == 0 and "No requests were made since" in out
