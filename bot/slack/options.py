"""A question's options as buttons: one per option (the clicks: option_buttons.py).

The card (render.question_message) shows these buttons instead of the free-text Answer
button when the agent offered options. A thread reply to such a question is matched
against the options in bot.slack.threads.
"""

from __future__ import annotations

import re

from bot.core.models import Question
from bot.slack import escape as esc

ACTION_OPTION = "hitl_q_option"  # one action id per button: ACTION_OPTION_<index>
ACTION_PATTERN = re.compile(rf"^{ACTION_OPTION}_(\d+)$")
_INDEX = re.compile(r"0|[1-9][0-9]{0,5}")  # as `option_actions` writes one: no sign, no pad


def issued_index(text: str, n: int) -> int | None:
    """The option index `text` names if a button of `n` options was drawn with it
    ("0" to str(n - 1), exactly), else None: `int` also takes "-1", "+0" and " 0"."""
    if not _INDEX.fullmatch(text):
        return None
    index = int(text)
    return index if index < n else None


def option_actions(q: Question) -> list[esc.Block]:
    """The option buttons of an open question: one actions block (Slack holds 25)."""
    buttons = [
        esc.button(option, f"{ACTION_OPTION}_{i}", f"{i} {q.id}")
        for i, option in enumerate(q.options)
    ]
    return [esc.actions(buttons, block_id="hitl_q_options")]


def options_line(options: tuple[str, ...]) -> str:
    """The options as a person reads them in a sentence, each escaped and quoted."""
    return " · ".join(f"“{esc.mrkdwn(o)}”" for o in options)
