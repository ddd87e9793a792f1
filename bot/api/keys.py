"""`GET /v1/keys`: the public keys decisions are signed with, for executors to verify."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from bot.gate.runtime import Runtime


class PublicKey(BaseModel):
    id: str  # the key id every seal names (sha256 of the raw key, 16 hex)
    algorithm: str  # "ed25519"
    public_key: str  # base64 of the 32 raw bytes: HITL_SIGNING_PUBLIC_KEY takes it as is
    pem: str  # the same key as SubjectPublicKeyInfo PEM


class Keys(BaseModel):
    signing: str | None  # the id of the key this server signs with (None: it signs nothing)
    keys: list[PublicKey]  # every key its claims accept


def router(rt: Runtime) -> APIRouter:
    r = APIRouter(tags=["keys"])

    @r.get("/keys", response_model=Keys, summary="The public keys decisions are signed with")
    async def keys() -> Keys:
        trusted = rt.claims.keys
        found = [PublicKey(**k) for k in trusted.listing()] if trusted else []
        return Keys(signing=rt.signer.key_id if rt.signer else None, keys=found)

    return r
