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
