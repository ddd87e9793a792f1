"""/metrics counts what people and timeouts did, in Prometheus text format."""

from __future__ import annotations

import httpx

from bot.core.models import Decision
from bot.core.states import Event
from tests.e2e.conftest import Bot
from tests.support.poll import eventually


async def _metrics(bot: Bot) -> str:
    async with httpx.AsyncClient() as http:
        resp = await http.get(bot.url + "/metrics")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/plain")
    return resp.text


async def test_metrics_count_decisions_rejections_and_pending(bot: Bot) -> None:
    approve_id = await bot.propose("refund", {"amount": 5})
    reject_id = await bot.propose("refund", {"amount": 6})
    await bot.propose("refund", {"amount": 4200})  # high, left pending
    for rid, d in (
        (approve_id, Decision(event=Event.APPROVE, actor="UALICE")),
        (reject_id, Decision(event=Event.REJECT, actor="UBOB", reason_code="too_risky")),
    ):
        req = await bot.requests.get(rid)
        await bot.requests.transition(rid, d.model_copy(update={"payload_hash": req.payload_hash}))

    async def counted() -> str | None:
        text = await _metrics(bot)
        return text if 'hitl_rejections_total{reason="too_risky"} 1' in text else None

    text = await eventually(counted)
    assert 'hitl_decisions_total{outcome="approved"} 1' in text
    assert 'hitl_decisions_total{outcome="rejected"} 1' in text
    assert "hitl_requests_created_total 3" in text
    assert 'hitl_pending_requests{tier="high"} 1' in text
    assert 'hitl_decision_seconds_bucket{le="+Inf"} 2' in text
    assert "# TYPE hitl_decision_seconds histogram" in text
    assert "hitl_outbox_depth " in text
