"""Agent runs for the operator's CLI: `hitl-bot runs` and `hitl-bot show RUN_ID`.

Read straight from the store (runs are kept 30 days): the run, the requests it made
(from the run's request index), the corrections people sent (the
run's audit), and the link to its Slack thread that the bot recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from bot import messages as msg
from bot.core.models import ActionRequest, Question, Run
from bot.gate.runtime import Runtime
from bot.slack.delivery.runlines import thread_link


@dataclass
class RunView:
    run: Run
    link: str | None = None
    requests: list[ActionRequest] = field(default_factory=list)
    steering: list[dict[str, Any]] = field(default_factory=list)  # the run's audit lines
    queued: int = 0  # corrections not read by the agent yet
    questions: list[Question] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return self.run.model_dump(mode="json") | {
            "link": self.link,
            "requests": [r.model_dump(mode="json") for r in self.requests],
            "steering": self.steering,
            "steering_queued": self.queued,
            "questions": [q.model_dump(mode="json") for q in self.questions],
        }


async def list_runs(rt: Runtime, limit: int) -> list[Run]:
    """The newest `limit` runs, read through the run index."""
    return await rt.runs.list(limit)


async def run_view(rt: Runtime, run_id: str) -> RunView:
    run = await rt.runs.get(run_id)
    view = RunView(run, await rt.cards.thread_link(run_id))
    view.requests = await rt.requests.of_run(run_id)
    view.steering = await rt.run_audit.entries(run_id)
    view.queued = await rt.steering.pending(run_id)
    view.questions = await rt.questions.of_run(run_id)
    return view


def runs_table(runs: list[Run]) -> Table:
    t = Table("id", "agent", "state", "turns", "requester", "waiting on", "started", "prompt")
    for r in runs:
        t.add_row(
            r.id,
            r.agent,
            r.state.value,
            str(r.turns),
            r.requester,
            r.waiting_on or "-",
            msg.when(r.created_at),
            _short(r.prompt, 60),
        )
    return t


def run_lines(view: RunView) -> list[str]:
    """The run as plain lines (no markup: everything in them came from people or agents)."""
    r = view.run
    out = [
        msg.CLI_RUN_HEAD.format(id=r.id, agent=r.agent, state=r.state.value, turns=r.turns),
        msg.CLI_RUN_WHO.format(who=r.requester, at=msg.when(r.created_at)),
        msg.CLI_RUN_PROMPT.format(prompt=r.prompt),
    ]
    if r.waiting_on:
        out.append(msg.CLI_RUN_WAITING.format(id=r.waiting_on))
    if r.result or r.error:
        out.append(
            msg.CLI_RUN_END.format(what="error" if r.error else "result", text=r.error or r.result)
        )
    where = view.link or (f"{r.channel} {r.thread_ts}" if r.thread_ts else None)
    if view.link and r.channel and r.thread_ts:
        # A link recorded before links named their thread opens the channel instead.
        where = thread_link(view.link, r.channel, r.thread_ts)
    out.append(msg.CLI_RUN_THREAD.format(where=where or msg.CLI_RUN_NO_THREAD))
    n = len(view.requests)
    out.append(msg.CLI_RUN_REQUESTS.format(n=n, word=msg.plural(n, "request")))
    for q in view.requests:
        out.append(
            msg.CLI_RUN_REQUEST.format(id=q.id, tool=q.tool, risk=q.risk.value, state=q.state.value)
        )
    out.append(msg.CLI_RUN_QUESTIONS.format(n=len(view.questions)))
    for qn in view.questions:
        out.append(f"  {msg.when(qn.asked_at)}  " + msg.CLI_RUN_ASKED.format(text=qn.question))
        if qn.answer is not None:
            said_by = msg.CLI_RUN_ANSWERED.format(who=qn.answered_by or "?", text=qn.answer)
            out.append(f"  {msg.when(qn.answered_at)}  {said_by}")
        else:
            out.append("  " + msg.CLI_RUN_UNANSWERED.format(state=qn.state.value))
    said = [e for e in view.steering if e.get("kind") in ("user_steering", "refused")]
    out.append(msg.CLI_RUN_STEERING.format(n=len(said), queued=view.queued))
    for e in said:
        if e.get("kind") == "refused":
            line = msg.CLI_RUN_REFUSED.format(who=e.get("actor", "?"), what=e.get("what", "?"))
        else:
            how = "stop" if e.get("hard_stop") else "steer"
            line = msg.CLI_RUN_STEER.format(
                who=e.get("actor", "?"), how=how, text=e.get("text", "")
            )
        out.append(f"  {msg.when(e.get('at'))}  {line}")
    return out


def _short(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"
