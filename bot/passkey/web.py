"""The passkey pages' routes, mounted by serve under /passkey.

A confirmation applies the approval only after, in order: the link is used for the
first time and before its expiry, the credential is one the approver enrolled (not
revoked, not someone else's), the assertion signed this link's challenge, py_webauthn
verifies it with user verification, and the request is still at the version the link
was made for. Each refusal says why, is audited on the request, and approves nothing.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from bot.core.args.payload import payload_hash
from bot.core.models import ActionRequest, Decision
from bot.core.states import State
from bot.core.stepup import (
    EXPIRED,
    FAILED,
    OTHER_PERSON,
    OTHER_REQUEST,
    OTHER_VERSION,
    REPLAYED,
    REVOKED,
    Binding,
    via_of,
)
from bot.core.text import iso
from bot.errors import HitlError, NotFound
from bot.gate import stepup
from bot.gate.runtime import Runtime
from bot.passkey import ceremony, pages
from bot.passkey import messages as msg
from bot.passkey.ceremony import CeremonyFailed, RelyingParty
from bot.store.passkeys import Credential
from bot.store.requests import Moved

log = logging.getLogger(__name__)

# (approver, request id, decision, version it was made for, foreign) -> the move; raises
# HitlError (a refusal, which the store audits) with a sentence the person reads.
Apply = Callable[[str, str, Decision, int, bool], Awaitable[Moved]]
MAX_BODY = 64_000  # a WebAuthn answer is a few kB


class Refused(HitlError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Pages:
    """The pages at HITL_PUBLIC_URL/passkey/...; `refusal_text`: how a decision the store
    refused is said (the same words as in Slack)."""

    def __init__(
        self, rt: Runtime, apply: Apply, *, refusal_text: Callable[[HitlError], str]
    ) -> None:
        self.rt, self.pk, self.apply = rt, rt.passkeys, apply
        self.rp = RelyingParty(rt.settings.hitl_public_url or "")
        self.refusal_text = refusal_text

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/enroll/{token}", self.enroll_page, methods=["GET"]),
                Route("/enroll/{token}", self.enroll, methods=["POST"]),
                Route("/confirm/{token}", self.confirm_page, methods=["GET"]),
                Route("/confirm/{token}", self.confirm, methods=["POST"]),
            ]
        )

    async def enroll_page(self, request: Request) -> Response:
        e, used = await self.pk.enrollment(request.path_params["token"])
        if e is None or used or e.expires_at <= self.rt.clock():
            return _html(msg.ENROLL_TITLE, pages.message(msg.UNKNOWN_LINK), status=404)
        existing = [c.id for c in await self.pk.of(e.user)]
        options = ceremony.registration_options(
            self.rp, user=e.user, challenge=e.challenge, existing=existing
        )
        intro = pages.message(msg.ENROLL_INTRO.format(user=e.user))
        return _html(msg.ENROLL_TITLE, intro + pages.button(msg.ENROLL_BUTTON), options=options)

    async def enroll(self, request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return _answer(False, msg.BAD_BODY, 400)
        e, used = await self.pk.enrollment(request.path_params["token"], take=True)
        if e is None or e.expires_at <= self.rt.clock():
            return _answer(False, msg.UNKNOWN_LINK, 404)
        if used:
            return _answer(False, msg.REPLAYED, 409)
        try:
            got = ceremony.verify_registration(self.rp, body, e.challenge)
        except CeremonyFailed as exc:
            log.info("passkey enrollment refused", extra={"actor": e.user, "why": str(exc)})
            return _answer(False, msg.ENROLL_FAILED.format(why=exc), 400)
        if await self.pk.owner(got.credential_id) is not None:  # ids are never reused
            return _answer(False, msg.ENROLL_FAILED.format(why=msg.KNOWN_CREDENTIAL), 409)
        cred = Credential(
            id=got.credential_id,
            user=e.user,
            public_key=got.public_key,
            sign_count=got.sign_count,
            created_at=self.rt.clock(),
        )
        await self.pk.add(cred)
        log.info("passkey enrolled", extra={"actor": e.user, "credential": cred.id})
        return _answer(True, msg.ENROLLED.format(id=cred.id))

    async def confirm_page(self, request: Request) -> Response:
        b, used = await self.pk.step_up(request.path_params["token"])
        if b is None or used or b.expires_at <= self.rt.clock():
            why = msg.REPLAYED if used else (msg.EXPIRED if b else msg.UNKNOWN_LINK)
            return _html(msg.CONFIRM_TITLE, pages.message(why), status=404)
        try:
            req = await self.rt.requests.get(b.request_id)
        except NotFound:
            return _html(msg.CONFIRM_TITLE, pages.message(msg.UNKNOWN_LINK), status=404)
        if req.version != b.version:  # never show a call other than the one it approves
            text = msg.OTHER_VERSION.format(was=b.version, now=req.version)
            return _html(msg.CONFIRM_TITLE, pages.message(text), status=409)
        allowed = [c.id for c in await self.pk.of(b.approver)]
        options = ceremony.authentication_options(self.rp, challenge=b.challenge, allowed=allowed)
        body = (
            pages.message(msg.CONFIRM_INTRO.format(user=b.approver))
            + pages.call_details(_rows(req, b))
            + pages.button(msg.CONFIRM_BUTTON)
        )
        return _html(msg.CONFIRM_TITLE, body, options=options)

    async def confirm(self, request: Request) -> Response:
        body = await _body(request)
        if body is None:
            return _answer(False, msg.BAD_BODY, 400)
        b, used = await self.pk.step_up(request.path_params["token"], take=True)
        if b is None:
            return _answer(False, msg.UNKNOWN_LINK, 404)
        try:
            cred = await self._verified(b, used, body)
            return _answer(True, await self._applied(b, cred))
        except Refused as exc:
            return _answer(False, str(exc), exc.status)

    async def _refuse(self, b: Binding, code: str, text: str, status: int, via: str) -> Refused:
        await stepup.refuse(self.pk, b, code, via=via)
        log.info(
            "step-up refused",
            extra={"request_id": b.request_id, "actor": b.approver, "reason": code},
        )
        return Refused(text, status)

    async def _verified(self, b: Binding, used: bool, body: dict[str, Any]) -> Credential:
        """The approver's credential that signed this link's challenge, or Refused."""
        try:
            cred_id = ceremony.credential_id_of(body)
        except CeremonyFailed:
            cred_id = ""
        via = via_of(cred_id) if cred_id else ""
        if used:
            raise await self._refuse(b, REPLAYED, msg.REPLAYED, 409, via)
        if b.expires_at <= self.rt.clock():
            raise await self._refuse(b, EXPIRED, msg.EXPIRED, 410, via)
        cred = await self.pk.get(b.approver, cred_id) if cred_id else None
        if cred is None:
            owner = await self.pk.owner(cred_id) if cred_id else None
            if owner is not None and owner != b.approver and not await self.pk.revoked(cred_id):
                text = msg.OTHER_PERSON.format(user=b.approver)
                raise await self._refuse(b, OTHER_PERSON, text, 403, via)
            raise await self._refuse(b, REVOKED, msg.REVOKED.format(user=b.approver), 403, via)
        if ceremony.challenge_of(body) != b.challenge:
            raise await self._refuse(b, OTHER_REQUEST, msg.OTHER_REQUEST, 403, via)
        try:
            count = ceremony.verify_assertion(
                self.rp, body, challenge=b.challenge, public_key=cred.public_key,
                sign_count=cred.sign_count,
            )  # fmt: skip
        except CeremonyFailed as exc:
            raise await self._refuse(b, FAILED, msg.FAILED.format(why=exc), 403, via) from None
        await self.pk.used(cred, count)
        return cred

    async def _applied(self, b: Binding, cred: Credential) -> str:
        """Apply the confirmed approval through the usual decision path; what to say."""
        via = via_of(cred.id)
        req = await self.rt.requests.get(b.request_id)
        if req.version != b.version and req.state == State.PENDING_REVIEW:
            text = msg.OTHER_VERSION.format(was=b.version, now=req.version)
            raise await self._refuse(b, OTHER_VERSION, text, 409, via)
        try:
            moved = await self.apply(
                b.approver, b.request_id, b.decision(cred.id), b.version, b.foreign
            )
        except HitlError as exc:  # the store refused it, and audited why
            raise Refused(msg.REFUSED.format(why=self.refusal_text(exc)), 409) from None
        if moved.noop and not moved.repeat:  # moved between our read and the store's
            text = msg.OTHER_VERSION.format(was=b.version, now=moved.request.version)
            raise await self._refuse(b, OTHER_VERSION, text, 409, via)
        log.info(
            "step-up confirmed",
            extra={"request_id": b.request_id, "actor": b.approver, "credential": cred.id},
        )
        done = moved.request
        if moved.repeat:
            return msg.ALREADY
        if done.state == State.PENDING_REVIEW:
            return msg.APPROVED_PARTLY.format(n=len(done.approvals), total=done.quorum)
        return msg.APPROVED


def passkey_app(
    rt: Runtime, apply: Apply, *, refusal_text: Callable[[HitlError], str]
) -> Starlette:
    return Pages(rt, apply, refusal_text=refusal_text).app()


def _html(title: str, body: str, *, options: str | None = None, status: int = 200) -> Response:
    nonce = secrets.token_urlsafe(16)
    headers = {
        "Content-Security-Policy": (
            f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        ),
        "Referrer-Policy": "no-referrer",  # the link's token is in its path
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }
    text = pages.page(title, body, nonce=nonce, options=options)
    return HTMLResponse(text, status_code=status, headers=headers)


def _answer(ok: bool, message: str, status: int = 200) -> JSONResponse:
    body = {"ok": ok, "message": message}
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


async def _body(request: Request) -> dict[str, Any] | None:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _rows(req: ActionRequest, b: Binding) -> list[tuple[str, str, bool]]:
    """The exact call the approval runs: an edit's or a chosen candidate's arguments when
    the link is for one, with their own payload hash."""
    args = b.new_args if b.new_args is not None else req.args
    digest = payload_hash(req.tool, args) if b.new_args is not None else req.payload_hash
    label = msg.F_ARGS
    if b.new_args is not None:
        label = msg.F_CHOSEN if req.candidates else msg.F_EDITED
    return [
        (msg.F_TOOL, req.tool, False),
        (label, json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True), True),
        (msg.F_HASH, digest, False),
        (msg.F_REQUESTER, req.on_behalf_of or req.requester, False),
        (msg.F_DEADLINE, iso(req.expires_at) if req.expires_at else "-", False),
        (msg.F_REQUEST, f"{req.id} (version {b.version})", False),
    ]
