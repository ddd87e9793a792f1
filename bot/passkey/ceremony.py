"""The WebAuthn ceremonies, through py_webauthn (never crypto of our own): the options a
page hands the browser, and the server-side check of what the authenticator answered.

The relying party is serve's public address (HITL_PUBLIC_URL): its host is the RP id,
the whole origin is what a response must come from. User verification is required both
at enrollment and at every confirmation: the person unlocked the authenticator.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

# pyOpenSSL, which py_webauthn imports for attestation certificates, warns at import
# about DSA on newer cryptography releases; no DSA key is ever used here.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from webauthn import (
        base64url_to_bytes,
        generate_authentication_options,
        generate_registration_options,
        options_to_json,
        verify_authentication_response,
        verify_registration_response,
    )
    from webauthn.helpers import bytes_to_base64url
    from webauthn.helpers.exceptions import WebAuthnException
    from webauthn.helpers.structs import (
        AuthenticatorSelectionCriteria,
        PublicKeyCredentialDescriptor,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )

from bot.errors import HitlError

RP_NAME = "hitl-bot"
TIMEOUT_MS = 120_000


class CeremonyFailed(HitlError):
    """What the authenticator answered does not verify."""


@dataclass(frozen=True)
class RelyingParty:
    origin: str  # scheme://host[:port], as HITL_PUBLIC_URL has it

    @property
    def id(self) -> str:
        return urlsplit(self.origin).hostname or ""


@dataclass(frozen=True)
class Enrolled:
    credential_id: str
    public_key: str
    sign_count: int


def registration_options(
    rp: RelyingParty, *, user: str, challenge: str, existing: list[str]
) -> str:
    """The JSON `navigator.credentials.create` takes (the page decodes its base64url)."""
    options = generate_registration_options(
        rp_id=rp.id,
        rp_name=RP_NAME,
        user_name=user,
        user_id=user.encode(),
        user_display_name=user,
        challenge=base64url_to_bytes(challenge),
        timeout=TIMEOUT_MS,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=[_descriptor(c) for c in existing],
    )
    return options_to_json(options)


def verify_registration(rp: RelyingParty, response: dict[str, Any], challenge: str) -> Enrolled:
    try:
        got = verify_registration_response(
            credential=response,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=rp.id,
            expected_origin=rp.origin,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        raise CeremonyFailed(str(exc)) from None
    return Enrolled(
        credential_id=bytes_to_base64url(got.credential_id),
        public_key=bytes_to_base64url(got.credential_public_key),
        sign_count=got.sign_count,
    )


def authentication_options(rp: RelyingParty, *, challenge: str, allowed: list[str]) -> str:
    """The JSON `navigator.credentials.get` takes: only the approver's own credentials."""
    options = generate_authentication_options(
        rp_id=rp.id,
        challenge=base64url_to_bytes(challenge),
        timeout=TIMEOUT_MS,
        allow_credentials=[_descriptor(c) for c in allowed],
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    return options_to_json(options)


def credential_id_of(response: dict[str, Any]) -> str:
    """The credential an assertion names (unverified: only to find its public key)."""
    raw = response.get("rawId") or response.get("id")
    if not isinstance(raw, str) or not raw:
        raise CeremonyFailed("the answer names no credential")
    return raw


def challenge_of(response: dict[str, Any]) -> str | None:
    """The challenge an assertion signed (unverified: to say which link it was made for)."""
    try:
        client_data = base64url_to_bytes(response["response"]["clientDataJSON"])
        found = json.loads(client_data).get("challenge")
    except (KeyError, TypeError, ValueError):
        return None
    return found if isinstance(found, str) else None


def verify_assertion(
    rp: RelyingParty,
    response: dict[str, Any],
    *,
    challenge: str,
    public_key: str,
    sign_count: int,
) -> int:
    """Check the assertion against the challenge and the credential's key; its new
    signature counter."""
    try:
        got = verify_authentication_response(
            credential=response,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=rp.id,
            expected_origin=rp.origin,
            credential_public_key=base64url_to_bytes(public_key),
            credential_current_sign_count=sign_count,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        raise CeremonyFailed(str(exc)) from None
    return got.new_sign_count


def _descriptor(credential_id: str) -> PublicKeyCredentialDescriptor:
    return PublicKeyCredentialDescriptor(id=base64url_to_bytes(credential_id))
