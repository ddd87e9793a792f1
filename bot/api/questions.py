"""`/v1/questions`: an agent asks a person; first answer wins."""

from __future__ import annotations

from fastapi import APIRouter, Request

from bot.api.auth import caller
from bot.api.errors import documented
from bot.api.longpoll import hold
from bot.api.ownership import Ownership
from bot.api.schemas import ItemPath, QuestionIn, Wait
from bot.core.models import Question
from bot.core.proposal import check_channel, review_channels
from bot.gate import execution
from bot.gate.runtime import Runtime


def router(rt: Runtime, owners: Ownership, *, max_wait_s: float) -> APIRouter:
    r = APIRouter(prefix="/questions", tags=["questions"])

    @r.post(
        "",
        status_code=201,
        response_model=Question,
        summary="Ask a person a question",
        responses=documented(403, 404, 422),
    )
    async def ask(body: QuestionIn, request: Request) -> Question:
        identity = caller(request)
        # The bot's words go only where the policy has people reviewing.
        check_channel(body.channel, review_channels(rt.policy, rt.clock()), "questions")
        if body.run_id:
            await owners.use_run(body.run_id, identity)
        return await rt.questions.ask(
            body.question,
            timeout_ms=max(1, int(body.timeout_seconds * 1000)),
            run_id=body.run_id,
            channel=body.channel,
            owner=identity,
            options=body.options,
        )

    @r.get(
        "/{question_id}",
        response_model=Question,
        summary="Read a question; with ?wait, hold until it is answered, expires or is cancelled",
        responses=documented(404, 422),
    )
    async def get(request: Request, question_id: ItemPath, wait: Wait = None) -> Question:
        identity = caller(request)
        if wait:
            await owners.own_question(question_id, identity)
            waiting = execution.wait_question(rt.questions, question_id, min(wait, max_wait_s))
            return await hold(request, waiting)
        return await owners.question(question_id, identity)

    return r
