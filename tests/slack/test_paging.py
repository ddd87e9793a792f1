"""Pages to PagerDuty and Opsgenie, against local fakes over real sockets: the exact body
and headers each service documents, one page per level however often a notice is
retried, a resolve with the outcome once the request is decided, and no key in a log."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Resolution
from bot.core.policy import parse_policy
from bot.core.states import Event, State
from bot.errors import ConfigError
from bot.paging.pager import Pager
from bot.store.figures import metrics
from bot.store.requests import RequestStore
from bot.store.stores import StoreSet
from tests.conftest import QUORUM_POLICY
from tests.support.fakepagers import FakePagers, serve_fake

PD_KEY = "R0UT1NGKEYsecretvalue0123456789ab"
OG_KEY = "0f1e2d3c-genie-secret-key-aaaabbbbcccc"
ENV = {"PD_ROUTING_KEY": PD_KEY, "OPSGENIE_KEY": OG_KEY}


@pytest.fixture
def fake() -> Iterator[FakePagers]:
    yield from serve_fake()


def _policy(fake_url: str) -> dict[str, Any]:
    policy = copy.deepcopy(QUORUM_POLICY)
    policy["tiers"]["critical"]["escalation"] = [
        {
            "pagerduty": {
                "routing_key_env": "PD_ROUTING_KEY",
                "severity": "critical",
                "url": f"{fake_url}/v2/enqueue",
            },
            "opsgenie": {
                "api_key_env": "OPSGENIE_KEY",
                "responders": [
                    {"type": "team", "name": "platform"},
                    {"type": "user", "username": "ana@example.com"},
                ],
                "priority": "P2",
                "url": fake_url,
            },
        }
    ]  # fmt: skip
    return policy


async def _paged(store: RequestStore, fake: FakePagers) -> ActionRequest:
    made = await store.create(
        parse_policy(_policy(fake.url)),
        tool="deploy",
        args={"service": "api", "note": "<!channel> \u202eevil" + "x" * 200},
        requester="agent:ci",
        on_behalf_of="UANA",
    )
    req = await store.get(made.request.id)  # the levels as the store keeps them
    return req.model_copy(update={"level": 1})


def _pager(redis: Redis, store: RequestStore, env: dict[str, str] = ENV) -> Pager:
    rt = StoreSet(redis, clock=store.clock)
    return Pager(rt, AsyncWebClient(token="x"), httpx.AsyncClient(timeout=5), env=env)


async def test_a_trigger_has_the_documented_shape_and_is_sent_once(
    redis: Redis, store: RequestStore, fake: FakePagers
) -> None:
    req = await _paged(store, fake)
    pager = _pager(redis, store)
    await pager.trigger(req)
    await pager.trigger(req)  # a retried notice: nothing more is sent

    (pd,) = fake.all("/v2/enqueue")
    assert pd.headers["content-type"] == "application/json"
    assert "authorization" not in pd.headers
    payload = pd.body["payload"]
    assert set(pd.body) == {"routing_key", "event_action", "dedup_key", "payload", "client"}
    assert pd.body["routing_key"] == PD_KEY and pd.body["event_action"] == "trigger"
    assert pd.body["dedup_key"] == f"hitl-{req.id}"
    assert set(payload) == {
        "summary", "source", "severity", "timestamp", "component", "group", "class",
        "custom_details",
    }  # fmt: skip
    assert payload["severity"] == "critical" and payload["source"] == "hitl-bot"
    summary = payload["summary"]
    assert len(summary) <= 1024 and summary.startswith("Approval needed (critical risk): deploy(")
    assert 'service="api"' in summary and "asked by agent:ci for UANA" in summary
    assert "\\u202e" in summary and "\u202e" not in summary  # the hidden character spelled out
    assert "…" in summary and "decide by 20" in summary  # the long value cut visibly; deadline
    details = payload["custom_details"]
    assert details["request_id"] == req.id and details["risk"] == "critical"

    (og,) = fake.all("/v2/alerts")
    assert og.path == "/v2/alerts"
    assert og.headers["authorization"] == f"GenieKey {OG_KEY}"
    assert og.headers["content-type"] == "application/json"
    assert set(og.body) == {
        "message", "alias", "description", "responders", "tags", "details", "source", "priority",
    }  # fmt: skip
    assert og.body["alias"] == f"hitl-{req.id}" and og.body["priority"] == "P2"
    assert len(og.body["message"]) <= 130 and og.body["message"].endswith("deploy")
    assert og.body["responders"] == [
        {"type": "team", "name": "platform"},
        {"type": "user", "username": "ana@example.com"},
    ]
    assert all(isinstance(v, str) for v in og.body["details"].values())  # Opsgenie's map
    assert og.body["description"].startswith(summary)


async def test_a_failed_page_raises_for_the_outbox_and_is_sent_once_it_passes(
    redis: Redis, store: RequestStore, fake: FakePagers
) -> None:
    req = await _paged(store, fake)
    pager = _pager(redis, store)
    fake.fail_next("/v2/enqueue", 500)
    with pytest.raises(httpx.HTTPError):
        await pager.trigger(req)
    await pager.trigger(req)  # the outbox's retry
    await pager.trigger(req)
    assert [s.status for s in fake.all("/v2/enqueue")] == [500, 202]
    assert len(fake.taken("/v2/alerts")) == 1
    text = await metrics.render(redis)
    sent = 'hitl_pages_total{action="trigger",outcome="sent",service="pagerduty"} 1'
    failed = 'hitl_pages_total{action="trigger",outcome="failed",service="pagerduty"} 1'
    assert sent in text and failed in text


async def test_the_decision_resolves_and_closes_the_page_with_the_outcome(
    redis: Redis, store: RequestStore, fake: FakePagers
) -> None:
    req = await _paged(store, fake)
    pager = _pager(redis, store)
    await pager.resolve(req.model_copy(update={"state": State.APPROVED}))
    assert fake.seen == []  # never paged: nothing to resolve
    await pager.trigger(req)
    decided = req.model_copy(
        update={
            "state": State.REJECTED,
            "resolution": Resolution(
                actor="UBOSS", at=1, event=Event.REJECT, text="not during the freeze"
            ),
        }
    )
    await pager.resolve(decided)
    await pager.resolve(decided)  # a retried notice resolves nothing twice
    (resolve,) = [s for s in fake.all("/v2/enqueue") if s.body["event_action"] == "resolve"]
    assert resolve.body == {
        "routing_key": PD_KEY,
        "event_action": "resolve",
        "dedup_key": f"hitl-{req.id}",
    }
    (close,) = [s for s in fake.all("/v2/alerts/") if s.path.endswith("identifierType=alias")]
    assert close.path == f"/v2/alerts/hitl-{req.id}/close?identifierType=alias"
    assert close.headers["authorization"] == f"GenieKey {OG_KEY}"
    assert close.body == {
        "user": "hitl-bot",
        "source": "hitl-bot",
        "note": "hitl-bot: the request left review: rejected by UBOSS: not during the freeze",
    }


async def test_a_missing_key_is_named_never_shown_and_does_not_block(
    redis: Redis, store: RequestStore, fake: FakePagers, caplog: pytest.LogCaptureFixture
) -> None:
    req = await _paged(store, fake)
    with caplog.at_level(logging.DEBUG):
        await _pager(redis, store, env={"OPSGENIE_KEY": OG_KEY}).trigger(req)
        fake.fail_next("/v2/alerts", 400)  # Opsgenie says no for good: logged, not retried forever
        req2 = await _paged(store, fake)
        await _pager(redis, store).trigger(req2)
    logged = caplog.text
    assert "PD_ROUTING_KEY is not set" in logged and "refused" in logged
    assert PD_KEY not in logged and OG_KEY not in logged
    assert len(fake.all("/v2/enqueue")) == 0 + 0 + 1  # req: no key; req2: sent


@pytest.mark.parametrize(
    ("level", "says"),
    [
        ({"pagerduty": {"routing_key_env": "PD_KEY", "severity": "urgent"}}, "severity"),
        ({"pagerduty": {"routing_key_env": "R0UT1NGKEYsecretvalue0123456789ab"}}, "variable"),
        ({"opsgenie": {"api_key_env": "OG", "responders": [{"type": "team"}]}}, "exactly one"),
        ({"opsgenie": {"api_key_env": "OG", "responders": [{"type": "squad", "id": "x"}]}}, "type"),
        ({"opsgenie": {"api_key_env": "OG", "api_key": "abc"}}, "unknown field"),
    ],
)  # fmt: skip
def test_a_wrong_pager_level_is_refused_naming_the_fix(level: dict[str, Any], says: str) -> None:
    policy = copy.deepcopy(QUORUM_POLICY)
    policy["tiers"]["critical"]["escalation"] = [level]
    with pytest.raises(ConfigError) as refused:
        parse_policy(policy)
    assert says in str(refused.value) and "tiers.critical.escalation.0" in str(refused.value)
    assert "R0UT1NGKEY" not in str(refused.value)  # a key pasted by mistake is not echoed


@pytest.mark.parametrize("state", [State.CANCELLED, State.AUTO_REJECTED, State.APPROVED])
async def test_every_way_out_of_review_closes_the_page_naming_it(
    redis: Redis, store: RequestStore, fake: FakePagers, state: State
) -> None:
    req = await _paged(store, fake)
    pager = _pager(redis, store)
    await pager.trigger(req)
    await pager.resolve(req)  # still pending: the page stays open
    assert not fake.all(f"/v2/alerts/hitl-{req.id}/close")
    await pager.resolve(req.model_copy(update={"state": state}))
    (close,) = fake.taken(f"/v2/alerts/hitl-{req.id}/close")
    assert close.body["note"] == f"hitl-bot: the request left review: {state.value}"
    assert [s.body["event_action"] for s in fake.taken("/v2/enqueue")] == ["trigger", "resolve"]
