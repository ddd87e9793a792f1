"""Which API identity may touch which work: its own, and the operators' right to look.

Every request, question and run records its owner. Another identity is told what
it would be told of an id that does not exist (the same 404, the same body), so
it cannot even learn that the work is there. `HITL_API_OPERATORS` may read and
stop everything; they may not act as the owner (claim, report, cancel, steer,
take its corrections, file under its run), since that would be doing the agent's
work in its name rather than overseeing it.
"""

from __future__ import annotations

from bot import messages as bot_msg
from bot.api import messages as msg
from bot.core.models import ActionRequest, Question
from bot.errors import Forbidden, NotFound
from bot.gate.runtime import Runtime


class Ownership:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.operators = rt.settings.api_operators()
        self.runs = rt.owners

    def _sees(self, identity: str, owner: str, *, operators: bool) -> bool:
        return identity == owner or (operators and identity in self.operators)

    async def request(self, rid: str, identity: str) -> ActionRequest:
        """The request, read by its owner or an operator."""
        req = await self.rt.requests.get(rid)
        if not self._sees(identity, req.owner, operators=True):
            raise NotFound(bot_msg.UNKNOWN_REQUEST.format(id=rid))
        return req

    async def own_request(self, rid: str, identity: str, *, operators: bool = False) -> None:
        """Refuse, as for an unknown id, a request that is not `identity`'s. Two fields,
        not the whole request: this runs before every claim and report.

        Without `operators` the caller means to act on it (claim, report, cancel): a
        request the worker filed for the identity's run is the worker's to run, and
        a claim over the API would race it, so that is refused (403, since its owner
        may know it is there)."""
        fields = await self.runs.request_owner(rid)
        owner = fields[0] or fields[1]  # a missing owner is the requester (bot/store/codec.py)
        if owner is None or not self._sees(identity, owner, operators=operators):
            raise NotFound(bot_msg.UNKNOWN_REQUEST.format(id=rid))
        if not operators and fields[0]:  # an owner apart from the requester: a run's worker
            raise Forbidden(msg.WORKERS_CALL.format(id=rid))

    async def question(self, qid: str, identity: str) -> Question:
        q = await self.rt.questions.get(qid)
        if not self._sees(identity, q.owner, operators=True):
            raise NotFound(bot_msg.UNKNOWN_QUESTION.format(id=qid))
        return q

    async def own_question(self, qid: str, identity: str) -> None:
        owner = await self.runs.question_owner(qid)
        if owner is None or not self._sees(identity, owner, operators=True):
            raise NotFound(bot_msg.UNKNOWN_QUESTION.format(id=qid))

    async def use_run(self, run_id: str, identity: str, *, title: str | None = None) -> None:
        """Take the run id for `identity` if nobody used it; 404 if another did. `title`
        names a run that has no name yet."""
        if await self.runs.claim(run_id, identity, title=title) != identity:
            raise NotFound(msg.UNKNOWN_RUN.format(id=run_id))

    async def run(self, run_id: str, identity: str, *, operators: bool) -> None:
        """Refuse a run id that is not `identity`'s (or, with `operators`, an operator's
        to oversee), or that nobody used."""
        owner = await self.runs.owner(run_id)
        if owner is None or not self._sees(identity, owner, operators=operators):
            raise NotFound(msg.UNKNOWN_RUN.format(id=run_id))
