"""A question's options as buttons: one per option (the clicks: option_buttons.py).

The card (render.question_message) shows these buttons instead of the free-text Answer
button when the agent offered options. A thread reply to such a question is matched
against the options in bot.slack.listeners.threads.
"""

from __future__ import annotations

import re

from bot.core.models import Question
from bot.slack.blocks import escape as esc

ACTION_OPTION = "hitl_q_option"  # one action id per button: ACTION_OPTION_<index>
ACTION_PATTERN = re.compile(rf"^{ACTION_OPTION}_(\d+)$")
# As `option_actions` writes a value: the index (no sign, no padding), one space, the id
_VALUE = re.compile(r"(0|[1-9][0-9]{0,5}) (\S{1,256})")


def issued(action_id: object, value: object) -> tuple[int, str] | None:
    """(index, question id) of a click on a button `option_actions` drew, else None:
    `int` alone would also take "-1" (the last option), "+0" and "\t0". The index is
    checked against the question's options by the caller."""
    found = _VALUE.fullmatch(value) if isinstance(value, str) else None
    if found is None or action_id != f"{ACTION_OPTION}_{found[1]}":
        return None
    return int(found[1]), found[2]


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
