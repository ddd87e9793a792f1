"""The card the approver reads in Slack shows every argument, as it is (read back from
the emulator, after the real bot posted it)."""

from __future__ import annotations

from typing import Any

from bot.slack import messages as m
from tests.e2e.conftest import Bot
from tests.slack.test_render import mrkdwn_texts


def _msg(bot: Bot, ch: str, ts: str) -> Any:
    return next(x for x in bot.emu.messages(ch) if x.ts == ts)


async def test_a_20kb_blob_hides_no_argument_and_hidden_characters_show(bot: Bot) -> None:
    args = {
        "order_id": "A-1001",
        "blob": "b" * 20_000,
        "note": "\u202e12345 <!channel>",
        "amount": 4200.0,  # what a float schema makes of the model's 4200
        "currency": "USD",
    }
    rid = await bot.propose("refund", args)
    ch, ts = await bot.message_of(rid)
    card = _msg(bot, ch, ts)
    text = "\n".join(mrkdwn_texts(card.blocks or []))
    # Every name, in the caller's order, although the blob is far over a section's 3,000.
    pos = [text.index(f'"{name}": ') for name in args]
    assert pos == sorted(pos), text[:2000]
    assert '"order_id": "A-1001"' in text
    assert "✂ Cut to fit in Slack: `blob` (20,002 characters)" in text
    # U+202E is spelled out, never passed on: "12345" cannot read as "54321".
    assert "\u202e" not in text and "\u202e" not in card.text
    assert '"note": "\\u202e12345 &lt;!channel&gt;"' in text  # and <!channel> pings nobody
    assert m.HIDDEN_CHARS_WARNING in text
    assert "4,200 USD" in text and "4,200.0" not in text
