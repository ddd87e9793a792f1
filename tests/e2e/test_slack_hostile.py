"""Signed but hostile Slack payloads: never a 500, never a change, always told why.

Whoever holds the app's signing secret can send any shape to any listener. Each test
drives the real bot (run_serve) over HTTP with signed requests and checks the answer
(a refusal a person reads: a field error, an ephemeral, a 4xx naming the defect) and
that the live request, its audit and the question it names are as they were.
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.models import QuestionState
from bot.core.states import State
from bot.slack import messages as smsg
from bot.slack.batch import card as batch_card
from bot.slack.blocks import render
from bot.slack.blocks.escape import ButtonValue
from bot.slack.blocks.options import ACTION_OPTION
from bot.slack.blocks.proposals import ACTION_CHOOSE
from bot.slack.grants.card import ACTION_GRANT, ACTION_REVOKE, VIEW_GRANT
from bot.slack.grants.views import SCOPE_ACTION, SCOPE_BLOCK, USES_ACTION, USES_BLOCK
from bot.slack.listeners.view_seal import ViewSeal
from bot.store import audit
from bot.store.grants import GrantStore
from tests.e2e import conftest
from tests.e2e.conftest import Bot, sealed
from tests.e2e.test_slack_bad_input import FORM_TYPE, TEAM, form, sign, submit
from tests.support.keys import other_signer
from tests.support.poll import eventually

HOUR = 3_600_000
CHANNEL = "CHITLAPPROVALS"


@pytest.fixture(autouse=True)
def standing_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standing approvals on the medium tier, so the "allow similar" dialog is live."""
    policy: dict[str, Any] = copy.deepcopy(conftest.POLICY)
    policy["tiers"]["medium"]["standing"] = {"max": "1h", "scope": "requester"}
    monkeypatch.setattr(conftest, "POLICY", policy)


async def _post(bot: Bot, body: bytes | str, content_type: str = FORM_TYPE) -> httpx.Response:
    raw = body.encode() if isinstance(body, str) else body
    headers = {"Content-Type": content_type} | sign(raw, str(int(time.time())))
    async with httpx.AsyncClient() as http:
        return await http.post(bot.url + "/slack/events", content=raw, headers=headers)


async def _state(bot: Bot, rid: str) -> tuple[Any, ...]:
    req = await bot.requests.get(rid)
    return req.state, req.version, len(await audit.entries(bot.redis, rid))


async def _live(bot: Bot) -> tuple[str, str]:
    rid = await bot.propose("refund", {"amount": 5})
    await bot.message_of(rid)
    return rid, ButtonValue.encode(rid, (await bot.requests.get(rid)).payload_hash)


def _reject(value: str, reason: Any) -> dict[str, Any]:
    chosen = {"selected_option": {"value": reason}}
    return {
        "id": "V1",
        "type": "modal",
        "callback_id": render.VIEW_REJECT,
        "private_metadata": value,
        "state": {"values": {render.REASON_BLOCK: {render.REASON_ACTION: chosen}}},
    }


@pytest.mark.parametrize("reason", [["other"], {"value": "other"}], ids=["a list", "an object"])
async def test_a_reject_reason_code_that_is_no_string_is_refused_not_a_500(
    bot: Bot, reason: Any
) -> None:
    rid, value = await _live(bot)
    before = await _state(bot, rid)
    resp = await _post(bot, submit(sealed(_reject(value, reason))))
    assert resp.status_code == 400, resp.text
    assert "selected_option.value must be a string" in resp.json()["detail"]
    assert await _state(bot, rid) == before


@pytest.mark.parametrize(
    "seal",
    [None, ViewSeal(other_signer(), other_signer().public()), "UBOB"],
    ids=["none", "another key", "another person's"],
)
async def test_a_dialog_serve_did_not_seal_is_refused_in_the_modal(bot: Bot, seal: Any) -> None:
    """The button check is a sha256 anyone computes; the dialog's is serve's signature."""
    rid, value = await _live(bot)
    before = await _state(bot, rid)
    view = _reject(value, "other")
    if isinstance(seal, ViewSeal):
        view = seal.seal(view, "UALICE")
    elif isinstance(seal, str):  # sealed for Bob, sent as Alice
        view = sealed(view, seal)
    resp = await _post(bot, submit(view))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {
        "response_action": "errors",
        "errors": {render.REASON_BLOCK: smsg.VIEW_SEAL_BAD},
    }
    assert await _state(bot, rid) == before
    # the same dialog sealed by serve for Alice rejects
    assert (await _post(bot, submit(sealed(_reject(value, "other"))))).status_code == 200
    assert (await bot.requests.get(rid)).state in (State.REJECTED, State.CANCELLED)


def _grant_view(value: str, uses: str) -> dict[str, Any]:
    return {
        "id": "V1",
        "type": "modal",
        "callback_id": VIEW_GRANT,
        "private_metadata": value,
        "state": {
            "values": {
                SCOPE_BLOCK: {SCOPE_ACTION: {"selected_option": {"value": "requester"}}},
                "hitl_grant_span": {"span": {"selected_option": {"value": str(HOUR)}}},
                USES_BLOCK: {USES_ACTION: {"value": uses}},
            }
        },
    }


@pytest.mark.parametrize("uses", ["²", "①", "٣", "+3", " 3 3", "0", "101", "9" * 5000])
async def test_the_uses_box_takes_ascii_digits_in_range_with_a_field_error_otherwise(
    bot: Bot, uses: str
) -> None:
    rid, value = await _live(bot)
    before = await _state(bot, rid)
    body = {"type": "view_submission", "user": {"id": "UBOB", "team_id": TEAM}}
    body["view"] = sealed(_grant_view(value, uses[:3000]), "UBOB")
    resp = await _post(bot, form(body))
    assert resp.status_code == 200, resp.text
    assert resp.json()["response_action"] == "errors"
    assert "whole number from 1 to 100" in resp.json()["errors"][USES_BLOCK]
    assert await _state(bot, rid) == before
    assert await GrantStore(bot.redis, clock=bot.clock).live() == []


def _click(action_id: str, value: str, user: str = "UALICE") -> str:
    return form(
        {
            "type": "block_actions",
            "user": {"id": user, "team_id": TEAM},
            "trigger_id": "1.2.3",
            "channel": {"id": CHANNEL},
            "container": {"type": "message", "channel_id": CHANNEL},
            "actions": [{"action_id": action_id, "value": value, "type": "button"}],
        }
    )


@pytest.mark.parametrize("index", ["-1", "+0", "\t0", "00", "0 ", "2", "\u0660"])
async def test_an_option_index_the_bot_never_issued_is_refused(bot: Bot, index: str) -> None:
    q = await bot.questions.ask("Go?", timeout_ms=600_000, options=["Go", "Stop"])
    resp = await _post(bot, _click(f"{ACTION_OPTION}_0", f"{index} {q.id}"))
    assert resp.status_code == 200, resp.text

    def told() -> str | None:
        return next((e.text for e in bot.emu.ephemerals("UALICE")), None)

    assert await eventually(told, what="the click refused") == smsg.OPTION_NOT_OFFERED
    after = await bot.questions.get(q.id)
    assert (after.state, after.answer) == (QuestionState.OPEN, None)
    # an index as issued answers
    await _post(bot, _click(f"{ACTION_OPTION}_1", f"1 {q.id}"))

    async def answered() -> str | None:
        return (await bot.questions.get(q.id)).answer

    assert await eventually(answered, what="the issued index answering") == "Stop"


# -- the property: every interactive listener, any shape ------------------------------

ACTIONS = [
    render.ACTION_APPROVE, render.ACTION_REJECT, render.ACTION_EDIT, render.ACTION_VIEW,
    render.ACTION_ANSWER, ACTION_GRANT, ACTION_REVOKE, f"{ACTION_CHOOSE}_0",
    f"{ACTION_OPTION}_0", batch_card.ACTION_APPROVE_ALL, batch_card.ACTION_REJECT_ALL,
]  # fmt: skip
VIEWS = [
    render.VIEW_REJECT, render.VIEW_EDIT, render.VIEW_PAYLOAD, render.VIEW_ANSWER,
    VIEW_GRANT, batch_card.VIEW_REJECT_ALL,
]  # fmt: skip
BLOCKS = [
    render.REASON_BLOCK, render.REASON_TEXT_BLOCK, render.ARGS_BLOCK, render.ANSWER_BLOCK,
    SCOPE_BLOCK, USES_BLOCK, "hitl_grant_span", "hitl_grant_max_0",
]  # fmt: skip
ELEMENTS = [
    render.REASON_ACTION, render.REASON_TEXT_ACTION, render.ARGS_ACTION,
    render.ANSWER_TEXT_ACTION, SCOPE_ACTION, USES_ACTION, "span", "max",
]  # fmt: skip
# A request that does not exist, with the check a button carries: what anyone can write
GHOST = ButtonValue.encode("nosuchrequest", "a" * 64)
USERS = ["UALICE", "UBOB", "UKID", "UNOBODY"]
WORDS = ["0", "-1", "+0", "²", "①", "٣", "1e999", "NaN", "", " ", "other", "{}", "[]"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=12)
    | st.sampled_from(WORDS + ACTIONS + VIEWS)
)
shapes = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["value", "selected_option", "type"]), inner, max_size=3)
    ),
    max_leaves=8,
)
texts = st.text(max_size=40) | st.sampled_from(WORDS)
# Slack's own keys (an option's `value`), holding anything
option = st.fixed_dictionaries({"value": shapes}) | shapes
element = st.fixed_dictionaries(
    {},
    optional={"value": shapes, "selected_option": option, "selected_options": st.lists(option)},
)
# each input's block id with its own element's action id, as the dialogs draw them
values = st.lists(st.sampled_from(list(zip(BLOCKS, ELEMENTS, strict=True))), max_size=4).flatmap(
    lambda pairs: st.fixed_dictionaries(
        {block: st.fixed_dictionaries({action: element}) for block, action in pairs}
    )
)


@st.composite
def clicks(draw: st.DrawFn) -> dict[str, Any]:
    action: dict[str, Any] = {"action_id": draw(st.sampled_from(ACTIONS))}
    action |= draw(
        st.fixed_dictionaries(
            {}, optional={"value": shapes, "selected_option": shapes, "type": shapes}
        )
    )
    return {
        "type": "block_actions",
        "user": {"id": draw(st.sampled_from(USERS)), "team_id": TEAM},
        "trigger_id": "1.2.3",
        "channel": {"id": CHANNEL},
        "container": {"type": "message", "channel_id": CHANNEL},
        "actions": [action],
    }


def submissions(callback_id: str) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def drawn(draw: st.DrawFn) -> dict[str, Any]:
        user = draw(st.sampled_from(USERS))
        view = {
            "id": "V1",
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": draw(st.sampled_from([GHOST, GHOST, "0"]) | texts.filter(bool)),
            "state": {"values": draw(values)},
        }
        if draw(st.integers(0, 3)):  # mostly past the seal: the listener reads the shapes
            view = sealed(view, user)
        kind = draw(st.sampled_from(["view_submission"] * 3 + ["view_closed"]))
        return {"type": kind, "user": {"id": user, "team_id": TEAM}, "view": view}

    return drawn()


@st.composite
def commands(draw: st.DrawFn) -> dict[str, Any]:
    verb = draw(st.sampled_from(["pending", "policy", "audit", "grants", "steer", "stop", ""]))
    return {
        "command": "/hitl",
        "text": f"{verb} {draw(texts)}".strip(),
        "user_id": draw(st.sampled_from(USERS)),
        "channel_id": CHANNEL,
        "team_id": TEAM,
        "trigger_id": "1.2.3",
    }


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["message", "app_mention", "app_home_opened"]))
    event: dict[str, Any] = {"type": kind, "user": draw(st.sampled_from(USERS))}
    if kind != "app_home_opened":
        event |= {"channel": CHANNEL, "ts": f"{time.time():.6f}", "text": draw(texts)}
        event |= draw(st.fixed_dictionaries({}, optional={"thread_ts": texts, "subtype": texts}))
    else:
        event["tab"] = draw(texts)
    return {
        "type": "event_callback",
        "team_id": TEAM,
        "event_id": f"Ev{draw(st.integers(0, 10**12))}",
        "event": event,
    }


@st.composite
def suggestions(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "type": "block_suggestion",
        "user": {"id": draw(st.sampled_from(USERS)), "team_id": TEAM},
        "action_id": draw(st.sampled_from(ACTIONS)),
        "block_id": draw(texts),
        "value": draw(texts),
    }


KINDS = {
    "block_actions": clicks(),
    **{f"view:{v}": submissions(v) for v in VIEWS},
    "slash_command": commands(),
    "event": events(),
    "options": suggestions(),
}
PROPERTY = settings(
    max_examples=30,
    derandomize=True,  # CI and a laptop try the same payloads
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


_LIVE: dict[int, tuple[str, tuple[Any, ...]]] = {}


async def _watched(bot: Bot) -> tuple[str, tuple[Any, ...]]:
    """One live request per bot, made at the first example: its id and state then."""
    if id(bot) not in _LIVE:
        rid, _ = await _live(bot)
        _LIVE[id(bot)] = rid, await _state(bot, rid)
    return _LIVE[id(bot)]


@pytest.mark.parametrize("kind", list(KINDS))
@PROPERTY
@given(data=st.data())
async def test_any_signed_payload_gets_a_refusal_never_a_500_nor_a_change(
    bot: Bot, kind: str, data: st.DataObject
) -> None:
    rid, before = await _watched(bot)
    payload = data.draw(KINDS[kind], label=kind)
    if kind == "slash_command":  # a form, as Slack sends commands
        resp = await _post(bot, str(httpx.QueryParams(payload)))
    elif kind == "event":
        resp = await _post(bot, json.dumps(payload), "application/json")
    else:
        resp = await _post(bot, form(payload))
    assert resp.status_code < 500, (resp.status_code, resp.text)
    if resp.status_code >= 400:  # a refusal that says why (Bolt's 404: no listener for it)
        assert resp.json().get("detail") or resp.json().get("error"), resp.text
    assert await _state(bot, rid) == before
