"""The gate's two calls that are not approvals: ask a person, and read a correction.

A base of `bot.sdk.gate.Gate` (through `Connections`, which gives `backend()`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from bot.core.models import Question, QuestionState
from bot.core.states import SystemReason
from bot.core.wire import QuestionIn, RunIdBody, checked
from bot.sdk import messages as msg
from bot.sdk.connections import Connections
from bot.sdk.errors import RunStopped, Unanswered

QUESTION_MARGIN_S = 1.0  # past the question's own timeout, before giving up on it


class Asking(Connections):
    channel: str | None
    max_wait_s: float

    async def ask(
        self,
        question: str,
        *,
        timeout: float = 3600,
        run_id: str | None = None,
        channel: str | None = None,
        options: Sequence[str] = (),
    ) -> str:
        """Ask a person; the first answer, or `Unanswered` once `timeout` seconds pass.

        With `options`, the card shows one button per option and the answer is the one
        chosen (`ask_answer` also says who chose it)."""
        return (
            await self.ask_answer(
                question, timeout=timeout, run_id=run_id, channel=channel, options=options
            )
        ).answer or ""

    async def ask_answer(
        self,
        question: str,
        *,
        timeout: float = 3600,
        run_id: str | None = None,
        channel: str | None = None,
        options: Sequence[str] = (),
    ) -> Question:
        """`ask`, returning the answered question: `answer`, `answered_by`, `answered_at`."""
        body = checked(
            QuestionIn,
            question=question,
            timeout_seconds=timeout,
            run_id=run_id,
            channel=channel or self.channel,
            options=list(options),
        )
        b = await self.backend()
        q = await b.ask(
            body.question,
            timeout_s=body.timeout_seconds,
            run_id=body.run_id,
            channel=body.channel,
            options=body.options,
        )
        deadline = time.monotonic() + body.timeout_seconds + QUESTION_MARGIN_S
        while q.state == QuestionState.OPEN:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            q = await b.wait_question(q.id, min(left, self.max_wait_s))
        if q.state == QuestionState.ANSWERED and q.answer is not None:
            return q
        if q.state == QuestionState.CANCELLED and q.run_id:
            # only a stop of its run cancels a question: the agent stops, as at a call
            raise RunStopped(msg.QUESTION_RUN_STOPPED, reason_code=SystemReason.RUN_STOPPED.value)
        state = "expired" if q.state == QuestionState.OPEN else q.state.value
        raise Unanswered(
            msg.QUESTION_UNANSWERED.format(question=question[:80], state=state), question=q
        )

    async def steering(self, run_id: str) -> str | None:
        """Pop the oldest correction a person queued for the run, or None."""
        checked(RunIdBody, run_id=run_id)
        got = await (await self.backend()).pop_steering(run_id)
        return None if got is None else got.text

    def ask_sync(
        self,
        question: str,
        *,
        timeout: float = 3600,
        run_id: str | None = None,
        channel: str | None = None,
        options: Sequence[str] = (),
    ) -> str:
        return self._sync.call(
            self.ask(question, timeout=timeout, run_id=run_id, channel=channel, options=options)
        )

    def steering_sync(self, run_id: str) -> str | None:
        return self._sync.call(self.steering(run_id))
