"""The App Home tab, as a pure function: what waits for this person, the runs they may
steer (a worker's or an outside agent's: SDK, API, MCP, a Claude Code session), then
the policy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.core.models import ActionRequest, Run
from bot.core.policy import Policy
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks import home_messages as hmsg
from bot.slack.blocks.escape import Block, section
from bot.slack.blocks.lists import pending_blocks, policy_blocks

__all__ = ["RunLine", "home_view", "runs_blocks"]

View = dict[str, Any]
RunLine = tuple[Run, str | None]  # a run and its thread's permalink, when Slack gave one
MAX_RUN_BLOCKS = 12


def home_view(
    pending: list[ActionRequest],
    policy: Policy,
    *,
    now_ms: int,
    runs: Sequence[RunLine] = (),
    operators: Sequence[Block] = (),
) -> View:
    """The requests waiting for this person, the live runs they may steer or stop, the
    operators' panel (`operators`: empty for anyone else), then the policy, within
    Slack's 100 blocks."""
    title = hmsg.HOME_PENDING_HEAD.format(n=len(pending))
    mine = pending_blocks(pending, now_ms=now_ms, max_blocks=40, title=title)
    running = runs_blocks(runs, max_blocks=MAX_RUN_BLOCKS)
    panel = [*operators, esc.divider()] if operators else []
    rest = esc.VIEW_BLOCKS - len(mine) - len(running) - len(panel) - 2
    return {
        "type": "home",
        "blocks": [
            *mine,
            esc.divider(),
            *running,
            esc.divider(),
            *panel,
            *policy_blocks(policy, max_blocks=rest),
        ],
    }


def runs_blocks(runs: Sequence[RunLine], *, max_blocks: int) -> list[Block]:
    blocks = [esc.header(hmsg.HOME_RUNS_HEAD.format(n=len(runs)), "hitl_runs_head")]
    if not runs:
        return [*blocks, section(hmsg.HOME_RUNS_NONE, block_id="hitl_runs_none")]
    shown = runs if len(runs) < max_blocks else runs[: max_blocks - 2]
    blocks += [section(run_line(run, link)) for run, link in shown]
    if len(shown) < len(runs):
        blocks.append(esc.context(smsg.AND_MORE.format(n=len(runs) - len(shown))))
    return blocks


def run_line(run: Run, link: str | None) -> str:
    """One run: what it is (its title, else its agent), its id, its state, and how to
    reach its thread. Everything but the labels came from agents or people: escaped."""
    name = run.prompt if run.outside and run.prompt else run.agent
    state = smsg.RUN_LABELS.get(run.state.value, run.state.value)
    first = hmsg.HOME_RUN_LINE.format(
        name=esc.mrkdwn(esc.truncate(name, 150)), id=esc.code(run.id), state=state
    )
    if run.waiting_on:
        first += hmsg.HOME_RUN_WAITING.format(id=esc.code(run.waiting_on))
    if link and link.startswith(("https://", "http://")) and not any(c in link for c in "<>| "):
        where = hmsg.HOME_RUN_THREAD.format(link=link)
    elif run.channel:
        where = hmsg.HOME_RUN_CHANNEL.format(channel=esc.mrkdwn(run.channel))
    else:
        where = hmsg.HOME_RUN_NO_THREAD
    return f"{first}\n{where} · {hmsg.HOME_RUN_HOW.format(id=esc.mrkdwn(run.id))}"
