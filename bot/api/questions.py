"""`/v1/questions`: an agent asks a person; first answer wins."""

from __future__ import annotations

from fastapi import APIRouter, Request

from bot.api.auth import mark_outside_run
from bot.api.errors import documented
from bot.api.fastjson import FastJsonRoute
from bot.api.longpoll import hold
from bot.api.schemas import ItemPath, QuestionIn, Wait
from bot.core.models import Question
from bot.runtime import Runtime
from bot.sdk import execution


def router(rt: Runtime, *, max_wait_s: float) -> APIRouter:
    r = APIRouter(prefix="/questions", tags=["questions"], route_class=FastJsonRoute)

    @r.post(
        "",
        status_code=201,
        response_model=Question,
        summary="Ask a person a question",
        responses=documented(422),
    )
    async def ask(body: QuestionIn) -> Question:
        asked = await rt.questions.ask(
            body.question,
            timeout_ms=max(1, int(body.timeout_seconds * 1000)),
            run_id=body.run_id,
            channel=body.channel,
        )
        if body.run_id:
            await mark_outside_run(rt, body.run_id)
        return asked

    @r.get(
        "/{question_id}",
        response_model=Question,
        summary="Read a question; with ?wait, hold until it is answered, expires or is cancelled",
        responses=documented(404, 422),
    )
    async def get(request: Request, question_id: ItemPath, wait: Wait = None) -> Question:
        if wait:
            waiting = execution.wait_question(rt.questions, question_id, min(wait, max_wait_s))
            return await hold(request, waiting)
        return await rt.questions.get(question_id)

    return r
