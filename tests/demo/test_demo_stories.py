"""The newest features, tried from the demo as its banner tells: the page's story buttons
(a digest of three small refunds, a choice among proposals), the standing approval a
medium card offers, the operators' panel, and `--policy FILE`."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from bot.demo import messages as say
from bot.demo.app import DemoOptions
from bot.demo.policy import DEMO_POLICY
from tests.demo.running import channel, post, reply_in, running_demo
from tests.support.poll import eventually

pytestmark = pytest.mark.timeout(90)

STORY_S = 20.0  # each story goes through the bot, the worker and the scripted model
STORIES = {s["label"]: s for s in say.OPENING["refunds"]["stories"]}


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hd", dir="/tmp"))  # short: a Unix socket lives there
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def refunds_demo(data_dir: Path, policy: Path | None = None) -> DemoOptions:
    return DemoOptions(agent="refunds", port=0, api_port=0, data_dir=data_dir, policy=policy)


def actions(message: dict[str, Any]) -> list[str]:
    """The action ids of a message's buttons: in actions blocks and beside sections."""
    found = []
    for block in message.get("blocks") or []:
        elements = block.get("elements", []) if block.get("type") == "actions" else []
        found += [e for e in [*elements, block.get("accessory") or {}] if e.get("action_id")]
    return [str(e["action_id"]) for e in found]


async def card_with(page: httpx.AsyncClient, where: str, action: str) -> dict[str, Any] | None:
    review = await channel(page, where)
    return next((m for m in review["messages"] if action in actions(m)), None)


async def tell(page: httpx.AsyncClient, label: str) -> list[str]:
    """What the story's button does: post its texts as its person; their ts."""
    story = STORIES[label]
    state = (await page.get("/_emu/state")).json()
    assert story in state["opening"]["stories"]  # the page draws a button for it
    return [await post(page, str(story["user"]), text) for text in story["texts"]]


async def click(page: httpx.AsyncClient, user: str, action: str, card: dict[str, Any]) -> None:
    sent = {"user": user, "action_id": action, "channel": card["channel"], "ts": card["ts"]}
    assert (await page.post("/_emu/click", json=sent)).json()["status"] == 200


async def test_three_small_refunds_make_a_digest_under_a_standing_offer(data_dir: Path) -> None:
    async with running_demo(data_dir, refunds_demo(data_dir)) as (page, _):
        homes = await tell(page, "Three small refunds (a digest)")
        digest = await eventually(
            lambda: card_with(page, "hitl-approvals", "hitl_digest_approve"), timeout_s=STORY_S
        )
        assert "3 `issue_refund` calls from `refunds-agent`" in str(digest)
        assert "*65 USD* in all" in str(digest)  # 18 + 35 + 12
        # Each small refund's own card offers a standing approval (the demo policy's medium).
        assert await card_with(page, "hitl-approvals", "hitl_grant") is not None
        await click(page, "UPARENT", "hitl_digest_approve", digest)
        for home, order, amount in zip(
            homes, ("B2001", "B2002", "B2003"), (18, 35, 12), strict=True
        ):
            done = f"Done. Refunded {amount:.2f} USD on order {order}."
            await eventually(lambda h=home, d=done: reply_in(page, h, d), timeout_s=STORY_S)

        # The policy's operators see the fatigue panel on their App Home; alice does not.
        async def home_of(user: str) -> list[str] | None:
            await page.post("/_emu/home", json={"user": user})
            view = (await page.get("/_emu/state")).json()["home"].get(user)
            return [str(b.get("block_id")) for b in view["blocks"]] if view else None

        for operator in ("UPARENT", "UCAROL"):
            shown = await eventually(lambda o=operator: home_of(o), timeout_s=STORY_S)
            assert any(b.startswith("hitl_fatigue") for b in shown), shown
        assert not any(b.startswith("hitl_fatigue") for b in await home_of("UALICE") or [])


async def test_full_or_half_is_one_card_to_choose_from(data_dir: Path) -> None:
    async with running_demo(data_dir, refunds_demo(data_dir)) as (page, _):
        (home,) = await tell(page, "Full or half? (a proposal)")
        proposal = await eventually(
            lambda: card_with(page, "hitl-approvals", "hitl_choose_1"), timeout_s=STORY_S
        )
        assert {"hitl_choose_0", "hitl_choose_1"} <= set(actions(proposal))
        assert "hitl_approve" not in actions(proposal)
        text = str(proposal)
        assert "240" in text and "120" in text
        await click(page, "UPARENT", "hitl_choose_1", proposal)  # the half
        await eventually(
            lambda: reply_in(page, home, "Done. Refunded 120.00 USD on order B2004."),
            timeout_s=STORY_S,
        )


async def test_the_demo_runs_by_the_policy_file_it_is_given(data_dir: Path, tmp_path: Path) -> None:
    # Refunds reviewed at medium in #hitl-leads, whatever the amount: not the demo's own.
    mine = {
        **DEMO_POLICY,
        "tiers": {
            **DEMO_POLICY["tiers"],
            "medium": {
                **DEMO_POLICY["tiers"]["medium"],
                "reviewers": {"channels": ["#hitl-leads"]},
            },
        },
        "tools": {**DEMO_POLICY["tools"], "issue_refund": {"tier": "medium"}},
    }
    file = tmp_path / "team-policy.yaml"
    file.write_text(yaml.safe_dump(mine), encoding="utf-8")
    async with running_demo(data_dir, refunds_demo(data_dir, file)) as (page, printed):
        assert f"Policy: {file}" in printed.getvalue()
        await post(
            page, "UCAROL", "<@UBOT> Refund order A1004 in full ($4,200), the TV arrived broken"
        )
        card = await eventually(
            lambda: card_with(page, "hitl-leads", "hitl_approve"), timeout_s=STORY_S
        )
        assert "MEDIUM risk" in card["text"] and "issue_refund" in card["text"]
    assert not (data_dir / "demo-policy.yaml").exists()  # its own was never written
