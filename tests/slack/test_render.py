"""The approval message and its companions, as an approver in Slack would see them.

Every message is checked the way Slack would check it: `slack_sdk.models`
(which enforces lengths only in `to_dict()`), plus the limits slack_sdk never
checks (50 blocks, 2,000 characters per field). Agent text must show literally:
no `<...>` reaches a mrkdwn field unless we built it from a checked id.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from bot.core.machine import apply
from bot.core.models import ActionRequest, Decision, Level, RiskTier
from bot.core.policy import Policy, parse_policy
from bot.core.proposal import propose
from bot.core.states import Event, State
from bot.slack.blocks import lines, render
from bot.slack.blocks.render import ButtonValue
from tests.conftest import QUORUM_POLICY

NOW = 1_800_000_000_000  # 2027-01-15T08:00:00Z
POLICY: Policy = parse_policy(QUORUM_POLICY)
SAFE_TAGS = re.compile(
    r"<!date\^\d+\^\{[a-z_]+\}(?: at \{time(?:_secs)?\})?(?: \{time_secs\})?\|[0-9TZ:-]+>"
    r"|<@[UW][A-Z0-9]{2,}>|<!subteam\^S[A-Z0-9]{2,}>|<#[CG][A-Z0-9]{2,}>"
    r"|<https?://[^|<>\s]+\|Open its thread>"  # a run's permalink, as Slack gave it
)
NASTY = ["<!channel>", "<@U123>", "<https://evil|Approve>", "<!here|x>", "a & b", "```", "&lt;"]
PAYMENT = {"amount": 1200, "currency": "EUR", "to": "acct-9", "memo": "March invoice"}


# -- helpers shared with the other tests/slack modules --------------------------------


def make(
    tool: str = "refund",
    args: dict[str, Any] | None = None,
    *,
    risk: RiskTier | None = None,
    requester: str = "U0REQUESTER",
    policy: Policy = POLICY,
) -> ActionRequest:
    """A request exactly as the gate creates it from the test policy."""
    req, _ = propose(
        policy,
        request_id="r00001",
        tool=tool,
        args=dict(PAYMENT) if args is None else args,
        requester=requester,
        now=NOW,
        run_id="run42",
        risk=risk,
    )
    return req


def decide(req: ActionRequest, event: Event, actor: str = "UBOSS", **kw: Any) -> ActionRequest:
    """The request after a decision, through the real state machine."""
    at = kw.pop("at", NOW + 60_000)
    human = event in (Event.APPROVE, Event.REJECT, Event.EDIT_AND_APPROVE)
    d = Decision(event=event, actor=actor, payload_hash=req.payload_hash if human else None, **kw)
    return apply(req, d, at).request


def walk(node: Any) -> list[dict[str, Any]]:
    """Every dict inside `node`, depth first."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        found.append(node)
        for v in node.values():
            found += walk(v)
    elif isinstance(node, list):
        for v in node:
            found += walk(v)
    return found


def mrkdwn_texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [d["text"] for d in walk(blocks) if d.get("type") == "mrkdwn"]


def buttons(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["action_id"]: d for d in walk(blocks) if d.get("type") == "button"}


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def assert_literal(text: str) -> None:
    """No `<…>` but the ones we build from checked ids, and every `&` starts an entity."""
    rest = SAFE_TAGS.sub("", text)
    assert "<" not in rest and ">" not in rest, text
    assert not re.search(r"&(?!amp;|lt;|gt;)", rest), text


def validate_blocks(blocks: list[dict[str, Any]], max_blocks: int = 50) -> None:
    """What Slack would refuse: slack_sdk's checks, then the limits slack_sdk skips."""
    assert 0 < len(blocks) <= max_blocks
    for raw in blocks:
        parsed = Block.parse(raw)
        assert parsed is not None, raw
        parsed.to_dict()  # raises SlackObjectFormationError on a broken length
        if raw["type"] == "section":
            assert len(raw.get("text", {}).get("text", "")) <= 3000
            assert len(raw.get("fields", [])) <= 10
            assert all(len(f["text"]) <= 2000 for f in raw.get("fields", []))
        if raw["type"] == "context":
            assert len(raw["elements"]) <= 10
            assert all(len(e["text"]) <= 3000 for e in raw["elements"])
        if raw["type"] == "header":
            assert len(raw["text"]["text"]) <= 150
    for b in buttons(blocks).values():
        assert len(b["text"]["text"]) <= 75 and len(b["value"]) <= 2000
    for text in mrkdwn_texts(blocks):
        assert text.strip(), "Slack refuses an empty text"
    ids = [b["block_id"] for b in blocks if "block_id" in b]
    assert len(ids) == len(set(ids)), "block ids must be unique in one message"


def validate(r: render.Rendered) -> None:
    validate_blocks(r.blocks)
    assert r.text and len(r.text) <= 3000
    assert_literal(r.text)
    for text in mrkdwn_texts(r.blocks):
        assert_literal(text)


# -- the approval message ------------------------------------------------------------------


def test_pending_message_shows_the_exact_call_and_who_decides() -> None:
    req = make(risk=RiskTier.HIGH)  # the test policy: high needs UBOSS or the SFINANCE group
    msg = render.approval_message(req, now_ms=NOW)
    validate(msg)
    head = msg.blocks[0]["text"]["text"]
    assert head == ":large_orange_circle: HIGH risk — approval needed"
    everything = "\n".join(mrkdwn_texts(msg.blocks))
    # The JSON as the caller ordered it (the hash is of the sorted form; the eye reads this)
    assert "```" + json.dumps(PAYMENT, indent=2) + "```" in everything
    assert "*amount*\n`1,200 EUR`" in everything  # thousands separated: a missed zero shows
    assert "*to*\n`acct-9`" in everything
    assert "`run42`" in everything and "<@U0REQUESTER>" in everything
    assert f"`{req.payload_hash[:12]}`" in everything and req.payload_hash not in everything
    assert "<!date^1800000600^{date_short_pretty} at {time}|2027-01-15T08:10:00Z>" in everything
    assert "1 of 3" in everything and "#approvals" in everything  # level 1 of 3, its channel
    assert "0 of 1" in everything  # approvals so far
    assert "<@UBOSS>, <!subteam^SFINANCE>" in everything  # the approvers, mentioned
    assert msg.text == "HIGH risk approval needed: refund (request r00001)"


def test_every_button_binds_the_request_and_its_full_hash() -> None:
    req = make(risk=RiskTier.HIGH)
    found = buttons(render.approval_message(req, now_ms=NOW).blocks)
    assert set(found) == {"hitl_approve", "hitl_reject", "hitl_edit", "hitl_view"}
    for b in found.values():
        assert ButtonValue.decode(b["value"]) == ("r00001", req.payload_hash)
    assert found["hitl_approve"]["style"] == "primary"
    assert found["hitl_reject"]["style"] == "danger"


@pytest.mark.parametrize(
    ("risk", "asks"),
    [
        (RiskTier.LOW, False),
        (RiskTier.MEDIUM, False),
        (RiskTier.HIGH, True),
        (RiskTier.CRITICAL, True),
    ],
)
def test_confirm_dialog_only_for_high_and_critical(risk: RiskTier, asks: bool) -> None:
    req = make(args={"amount": 250000, "currency": "USD", "target": "acct-77"})
    req = req.model_copy(update={"risk": risk})
    approve = buttons(render.approval_message(req, now_ms=NOW).blocks)["hitl_approve"]
    assert ("confirm" in approve) is asks
    assert "confirm" not in buttons(render.approval_message(req, now_ms=NOW).blocks)["hitl_reject"]
    if asks:
        text = approve["confirm"]["text"]["text"]
        assert "refund" in text and "250,000 USD" in text and "acct-77" in text
        assert (
            approve["confirm"]["title"]["text"] == f"Approve this {risk.value.upper()} risk call?"
        )


def test_edit_button_only_where_the_policy_allows_editing() -> None:
    req = make()
    assert "hitl_edit" in buttons(render.approval_message(req, now_ms=NOW).blocks)
    fixed = req.model_copy(update={"allow_edit": False})
    assert "hitl_edit" not in buttons(render.approval_message(fixed, now_ms=NOW).blocks)


def test_quorum_progress_keeps_the_buttons_until_met() -> None:
    req = make(tool="deploy", args={"service": "api", "environment": "prod"})  # critical: 2
    once = decide(req, Event.APPROVE, "U0ALICE")
    msg = render.approval_message(once, now_ms=NOW + 60_000)
    validate(msg)
    assert "1 of 2: <@U0ALICE>" in "\n".join(mrkdwn_texts(msg.blocks))
    assert "hitl_approve" in buttons(msg.blocks)
    assert lines.status_line(once, "approve") == "👍 Approved by <@U0ALICE> (1 of 2); 1 more needed"
    twice = decide(once, Event.APPROVE, "U0BOB")
    assert lines.status_line(twice, "approve") == "✅ Approved by <@U0BOB> (2 of 2)"
    done = render.approval_message(twice, now_ms=NOW + 60_000)
    assert not buttons(done.blocks)
    assert "2 of 2: <@U0ALICE>, <@U0BOB>" in "\n".join(mrkdwn_texts(done.blocks))


def after(req: ActionRequest, *steps: tuple[Event, dict[str, Any]]) -> ActionRequest:
    for event, kw in steps:
        req = decide(req, event, **kw)
    return req


TIMEOUTS = tuple((Event.TIMEOUT, {"actor": "system", "at": NOW + i * 10**8}) for i in (1, 2, 3))
Step = tuple[Event, dict[str, Any]]
APPROVE: Step = (Event.APPROVE, {})
CLAIM: Step = (Event.CLAIM, {"actor": "system"})


@pytest.mark.parametrize(
    ("steps", "state", "shows"),
    [
        ((APPROVE,), State.APPROVED, "✅ Approved by <@UBOSS> · <!date^1800000060^"),
        (
            ((Event.REJECT, {"reason_code": "wrong_target", "text": "use <!channel> acct"}),),
            State.CANCELLED,
            "Wrong target — use &lt;!channel&gt; acct",
        ),
        (TIMEOUTS, State.AUTO_REJECTED, "Nobody decided in time; the policy default applied"),
        ((APPROVE, CLAIM), State.EXECUTING, "▶️ Executing"),
        ((APPROVE, CLAIM, (Event.SUCCEED, {"detail": "sent"})), State.COMPLETED, "sent"),
        (
            (APPROVE, CLAIM, (Event.FAIL, {"detail": "bank said <@U9> no"})),
            State.MANUAL_INTERVENTION,
            "bank said &lt;@U9&gt; no",
        ),
        (((Event.CANCEL, {"actor": "U0OPS", "text": "run stopped"}),), State.CANCELLED, "U0OPS"),
    ],
)
def test_buttons_are_gone_once_the_request_left_review(
    steps: tuple[tuple[Event, dict[str, Any]], ...], state: State, shows: str
) -> None:
    req = after(make(), *steps)
    assert req.state == state
    msg = render.approval_message(req, now_ms=NOW + 10**9)
    validate(msg)
    assert not buttons(msg.blocks), f"{state}: a final or decided request must not offer buttons"
    assert not any(b["type"] == "actions" for b in msg.blocks)
    assert shows in "\n".join(mrkdwn_texts(msg.blocks))
    assert "approval needed" not in msg.blocks[0]["text"]["text"]


def test_rejected_header_and_outcome_say_who_when_and_why() -> None:
    req = decide(make(), Event.REJECT, reason_code="too_risky", text="not today")
    msg = render.approval_message(req, now_ms=NOW)
    assert msg.blocks[0]["text"]["text"] == ":large_orange_circle: HIGH risk — ⛔ Rejected"
    outcome = next(b for b in msg.blocks if b.get("block_id") == "hitl_outcome")["text"]["text"]
    assert "⛔ Rejected by <@UBOSS> · <!date^1800000060^" in outcome
    assert "Too risky — not today" in outcome


def test_deadline_is_a_slack_date_and_says_when_it_passed() -> None:
    req = make()
    before = "\n".join(mrkdwn_texts(render.approval_message(req, now_ms=NOW).blocks))
    assert (
        "*Decide by*\n<!date^1800000600^{date_short_pretty} at {time}|2027-01-15T08:10:00Z>"
        in before
    )
    assert "(passed)" not in before
    late = "\n".join(mrkdwn_texts(render.approval_message(req, now_ms=NOW + 600_000).blocks))
    assert "2027-01-15T08:10:00Z> (passed)" in late


def test_edited_request_shows_both_hashes() -> None:
    req = make()
    edited = decide(req, Event.EDIT_AND_APPROVE, new_args={**PAYMENT, "amount": 120})
    text = "\n".join(mrkdwn_texts(render.approval_message(edited, now_ms=NOW).blocks))
    assert f"*Edited from hash*\n`{req.payload_hash[:12]}`" in text
    assert f"`{edited.payload_hash[:12]}`" in text and "✏️ Edited and approved by <@UBOSS>" in text


# -- untrusted text --------------------------------------------------------------------------


def test_injection_attempts_render_as_literal_text_everywhere() -> None:
    args = {"to": "<!channel>", "memo": "<@U123> <https://evil|Approve> & co", "cmd": "x```y"}
    req = make("<!here>", args, requester="<!everyone>").model_copy(update={"run_id": "<#C123>"})
    for msg in (
        render.approval_message(req, now_ms=NOW),
        render.escalation_message(
            decide(req, Event.TIMEOUT, "system", at=NOW + 600_000), now_ms=NOW
        ),
    ):
        validate(msg)
        text = "\n".join(mrkdwn_texts(msg.blocks))
        assert "&lt;!channel&gt;" in text and "&lt;@U123&gt;" in text
        assert "&lt;https://evil|Approve&gt; &amp; co" in text
        assert "&lt;!everyone&gt;" in text and "&lt;!here&gt;" in text and "&lt;#C123&gt;" in text
        assert "<!channel>" not in text and "<@U123>" not in text
        assert "```y" not in text  # a backtick run in the data cannot close the code block
    rejected = decide(req, Event.REJECT, reason_code="other", text="<!channel> see <@U123>")
    line = lines.status_line(rejected, "reject")
    assert line == "⛔ Rejected by <@UBOSS>: &lt;!channel&gt; see &lt;@U123&gt;"


def test_mentions_only_for_real_slack_ids() -> None:
    for requester, shown in [
        ("U0ABC123", "<@U0ABC123>"),
        ("W0ENTERPRISE", "<@W0ENTERPRISE>"),
        ("agent:billing", "agent:billing"),
        ("u0lower", "u0lower"),
        ("U0ABC\n", "U0ABC\n"),
    ]:
        req = make(requester=requester)
        fields = next(
            b
            for b in render.approval_message(req, now_ms=NOW).blocks
            if "fields" in b and b.get("block_id") == "hitl_meta"
        )
        assert f"*Requested by*\n{shown}" in [f["text"] for f in fields["fields"]]


def test_huge_arguments_are_cut_with_a_visible_marker() -> None:
    args = {"to": "acct-9", "body": "x" * 20_000, **{f"k{i}": i for i in range(500)}}
    msg = render.approval_message(make(args=args), now_ms=NOW)
    validate(msg)
    args_text = next(b for b in msg.blocks if b.get("block_id") == "hitl_args")["text"]["text"]
    assert '"body": "xxx' in args_text and "… ✂ cut: 20,002 characters in all" in args_text
    assert len(args_text) <= 3000 and args_text.count("```") == 2
    note = next(b for b in msg.blocks if b.get("block_id") == "hitl_args_cut")
    assert "`body` (20,002 characters)" in note["elements"][0]["text"]
    everything = "\n".join(mrkdwn_texts(msg.blocks))
    assert all(f'"k{i}": {i}' in everything for i in range(500))  # nothing else was cut


def test_deeply_nested_and_unicode_arguments() -> None:
    nested: Any = "bottom"
    for _ in range(200):
        nested = {"d": [nested]}
    args = {"tree": nested, "name": "Zoë 北京 🚀 \u202e", "to": "Ünïcødé"}
    # New requests nest at most MAX_ARGS_DEPTH; a card still renders anything stored before.
    msg = render.approval_message(make().model_copy(update={"args": args}), now_ms=NOW)
    validate(msg)
    assert "`Ünïcødé`" in "\n".join(mrkdwn_texts(msg.blocks))
    deeper: Any = 1
    for _ in range(5000):  # deeper than json can print: say so instead of crashing
        deeper = [deeper]
    odd = make().model_copy(update={"args": {"x": deeper}})
    validate(render.approval_message(odd, now_ms=NOW))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(NASTY),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=20), inner, max_size=6)
    ),
    max_leaves=40,
)
json_args = st.dictionaries(
    st.text(max_size=30) | st.sampled_from(["amount", "to", "currency", "target", "path", "email"]),
    json_values,
    max_size=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    args=json_args,
    big=st.sampled_from(["", "<" * 5000, "é&" * 3000, "x" * 9000]),
    risk=st.sampled_from(list(RiskTier)),
    tool=st.text(min_size=1, max_size=300) | st.sampled_from(NASTY),
)
def test_any_json_arguments_render_valid_and_literal(
    args: dict[str, Any], big: str, risk: RiskTier, tool: str
) -> None:
    if big:
        args = {**args, "blob": big}
    req = ActionRequest(
        id="r1", tool=tool, args=args, payload_hash="a" * 64, requester="U0REQ", risk=risk,
        created_at=NOW, state=State.PENDING_REVIEW, expires_at=NOW + 1000, allow_edit=True,
        levels=(Level(timeout_ms=1000, users=("U0ONE",), groups=("S0TEAM",), channels=("#x",)),),
    )  # fmt: skip
    msg = render.approval_message(req, now_ms=NOW)
    validate(msg)  # slack_sdk, limits, <= 50 blocks, and no unescaped < > & from the arguments
    assert len(buttons(msg.blocks)) == 4


# -- buttons and hashes ------------------------------------------------------------------------


def test_button_value_round_trips_and_refuses_tampering() -> None:
    h = "0123456789abcdef" * 4
    value = ButtonValue.encode("r00001", h)
    assert ButtonValue.decode(value) == ("r00001", h)
    rid, hh, check = value.split(":")
    flipped = hh[:-1] + ("0" if hh[-1] != "0" else "1")
    for bad in [
        f"{rid}:{flipped}:{check}",  # another payload
        f"r00002:{hh}:{check}",  # another request
        f"{rid}:{hh}",  # no check
        f"{rid}:{hh}:{check}:x",
        f"{rid}:{hh[:12]}:{check}",  # a short hash is not the payload shown
        f"{rid}:{hh.upper()}:{check}",
        "",
        "garbage",
        json.dumps({"id": rid, "hash": hh}),
    ]:
        with pytest.raises(ValueError):
            ButtonValue.decode(bad)
    with pytest.raises(ValueError):
        ButtonValue.encode("r1", "abc")
    with pytest.raises(ValueError):
        ButtonValue.encode("r:1", h)


def test_blocks_hash_records_exactly_what_was_shown() -> None:
    req = make()
    one = render.approval_message(req, now_ms=NOW).blocks
    assert render.blocks_hash(one) == render.blocks_hash(
        render.approval_message(req, now_ms=NOW).blocks
    )
    assert re.fullmatch(r"[0-9a-f]{64}", render.blocks_hash(one))
    later = render.approval_message(decide(req, Event.APPROVE), now_ms=NOW).blocks
    assert render.blocks_hash(one) != render.blocks_hash(later)
