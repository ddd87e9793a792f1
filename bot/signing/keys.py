"""Loading serve's Ed25519 key and the public keys executors trust.

The private key is `HITL_SIGNING_KEY` (base64 of the 32-byte seed), or the same in the
file `HITL_SIGNING_KEY_FILE` names (a Docker or Kubernetes secret), or else
`HITL_DATA_DIR/signing.key`, made on first use with mode 0600; beside it `signing.pub`
holds the public key for executors that share the data dir, and `signing.previous` the
public keys of the keys `hitl-bot keys rotate` replaced (newest first), which still
verify what they sealed. An executor trusts `HITL_SIGNING_PUBLIC_KEY` (comma-separated,
for a rotation), else the key derived from `HITL_SIGNING_KEY` (or its file), else
`signing.pub` and `signing.previous`. No key: it refuses to claim (fail closed).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from bot.config import Settings
from bot.core.proof.seal import Seal, decision_bytes
from bot.errors import ConfigError
from bot.signing import messages as msg

KEY_FILE = "signing.key"
PUB_FILE = "signing.pub"
PREVIOUS_FILE = "signing.previous"
RAW = serialization.Encoding.Raw


def _raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(RAW, serialization.PublicFormat.Raw)


def key_id_of(key: Ed25519PublicKey) -> str:
    """A short name for a public key: its raw bytes' sha256, 16 hex characters."""
    return hashlib.sha256(_raw_public(key)).hexdigest()[:16]


def _decode32(text: str, name: str) -> bytes:
    try:
        raw = base64.b64decode(text.strip().replace("-", "+").replace("_", "/") + "==")
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise ConfigError(msg.BAD_KEY.format(name=name))
    return raw


class PublicKeys:
    """The keys an executor accepts decisions from, by key id."""

    def __init__(self, keys: list[Ed25519PublicKey]) -> None:
        self.keys = {key_id_of(k): k for k in keys}

    @classmethod
    def parse(cls, text: str, name: str = "HITL_SIGNING_PUBLIC_KEY") -> PublicKeys:
        # Commas in a setting, one key a line in a file (signing.previous).
        found = [
            Ed25519PublicKey.from_public_bytes(_decode32(part, name))
            for part in text.replace(",", " ").split()
        ]
        if not found:
            raise ConfigError(msg.BAD_KEY.format(name=name))
        return cls(found)

    def verify(self, key_id: str, data: bytes, signature: bytes) -> bool:
        key = self.keys.get(key_id)
        if key is None:
            return False
        try:
            key.verify(signature, data)
        except InvalidSignature:
            return False
        return True

    def listing(self) -> list[dict[str, str]]:
        """Each key as `GET /v1/keys` and `hitl-bot keys show` give it."""
        return [
            {
                "id": kid,
                "algorithm": "ed25519",
                "public_key": base64.b64encode(_raw_public(k)).decode(),
                "pem": k.public_bytes(
                    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
                ).decode(),
            }
            for kid, k in self.keys.items()
        ]


class Signer:
    """serve's private key. Only serve builds one and hands it to its store."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public_key = key.public_key()
        self.key_id = key_id_of(self.public_key)

    @classmethod
    def from_seed(cls, text: str, name: str = "HITL_SIGNING_KEY") -> Signer:
        return cls(Ed25519PrivateKey.from_private_bytes(_decode32(text, name)))

    def sign(self, data: bytes) -> bytes:
        return self._key.sign(data)

    def seal(
        self,
        *,
        request_id: str,
        version: int,
        event: str,
        actor: str,
        payload_hash: str,
        at: int,
        to_state: str,
    ) -> str:
        """The seal (bot/core/proof/seal.py) of one decision, as the store keeps it."""
        data = decision_bytes(
            request_id=request_id,
            version=version,
            event=event,
            actor=actor,
            payload_hash=payload_hash,
            at=at,
            to_state=to_state,
        )
        return Seal(self.key_id, version, event, self.sign(data)).encode()

    def public(self) -> PublicKeys:
        return PublicKeys([self.public_key])

    def public_b64(self) -> str:
        return base64.b64encode(_raw_public(self.public_key)).decode()


def read_key_file(path: Path) -> Signer:
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise ConfigError(msg.KEY_FILE_OPEN.format(path=path, mode=mode))
    try:
        return Signer.from_seed(path.read_text(), name=str(path))
    except ConfigError:
        raise ConfigError(msg.KEY_FILE_BAD.format(path=path)) from None


def write_atomic(path: Path, text: str, mode: int) -> None:
    """`path` holds `text` whole or is as it was: a reader never sees it half written."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(name, mode)
        os.replace(name, path)
    finally:
        Path(name).unlink(missing_ok=True)


def write_pub(data_dir: Path, signer: Signer) -> None:
    pub = data_dir / PUB_FILE
    if pub.exists() and pub.read_text().strip() == signer.public_b64():
        return
    write_atomic(pub, signer.public_b64() + "\n", 0o644)


def _read_secret_file(path: Path) -> Signer:
    try:
        mode = path.stat().st_mode & 0o777
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(
            msg.SECRET_FILE_UNREADABLE.format(path=path, why=exc.strerror or exc)
        ) from None
    if mode & 0o007:
        raise ConfigError(msg.SECRET_FILE_OPEN.format(path=path, mode=mode))
    try:
        return Signer.from_seed(text, name=str(path))
    except ConfigError:
        raise ConfigError(msg.SECRET_FILE_BAD.format(path=path)) from None


def load_signer(settings: Settings, *, create: bool = True) -> Signer:
    """serve's key: HITL_SIGNING_KEY or HITL_SIGNING_KEY_FILE, else the data dir's key
    file, made if missing (`create`; else a missing one is a ConfigError: only serve
    makes its key)."""
    if settings.hitl_signing_key is not None and settings.hitl_signing_key_file is not None:
        raise ConfigError(msg.KEY_TWICE)
    if settings.hitl_signing_key is not None:
        return Signer.from_seed(settings.hitl_signing_key.get_secret_value())
    if settings.hitl_signing_key_file is not None:
        return _read_secret_file(settings.hitl_signing_key_file)
    data_dir = settings.hitl_data_dir
    path = data_dir / KEY_FILE
    if not create and not path.exists():
        raise ConfigError(msg.NO_KEY.format(path=path))
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    seed = Ed25519PrivateKey.generate().private_bytes(
        RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    # Of two first starts at once, one key wins and both read it whole: the key is
    # written to a file of this process's own, then linked into place (link refuses an
    # existing name). Created in place, the other start could read it still empty.
    fd, name = tempfile.mkstemp(dir=data_dir, prefix=f".{KEY_FILE}.")  # mode 0600
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(base64.b64encode(seed).decode() + "\n")
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    signer = read_key_file(path)
    write_pub(data_dir, signer)
    return signer


def public_keys(settings: Settings) -> PublicKeys | None:
    """The keys an executor trusts, or None when none is set anywhere."""
    if settings.hitl_signing_public_key:
        return PublicKeys.parse(settings.hitl_signing_public_key)
    if settings.hitl_signing_key is not None or settings.hitl_signing_key_file is not None:
        return load_signer(settings, create=False).public()
    found: list[Ed25519PublicKey] = []
    for path in (settings.hitl_data_dir / PUB_FILE, settings.hitl_data_dir / PREVIOUS_FILE):
        text = path.read_text() if path.is_file() else ""
        if text.strip():  # an emptied signing.previous: every earlier key dropped
            found += PublicKeys.parse(text, name=str(path)).keys.values()
    return PublicKeys(found) if found else None


def require_public_keys(keys: PublicKeys | None) -> PublicKeys:
    if keys is None:
        raise ConfigError(msg.NO_PUBLIC_KEY)
    return keys


def trusted_keys(settings: Settings, signer: Signer | None = None) -> PublicKeys | None:
    """What an executor trusts: the configured public keys, and serve's own key in serve."""
    found = public_keys(settings)
    if signer is None:
        return found
    return PublicKeys([signer.public_key, *(found.keys.values() if found else [])])
