"""`hitl-bot keys rotate`: a new signing key, the old public key kept to verify with.

A decision sealed with the old key must still verify (an approval waiting to be claimed,
every entry `audit verify` reads), so the old public key is never dropped here.

In the data dir (no HITL_SIGNING_KEY): `signing.previous` gets the old public key first,
then the private key is replaced (0600, written whole then renamed) and `signing.pub`
names the new one. Executors sharing the data dir trust both at once; a serve running
keeps signing with the old key until it restarts. Two rotations at once take turns
(a lock file), so neither loses the key the other retired.

With HITL_SIGNING_KEY, nothing on disk holds the key: the new seed and the
HITL_SIGNING_PUBLIC_KEY value to roll out are returned for the operator to set.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.config import Settings
from bot.errors import ConfigError
from bot.signing import messages as msg
from bot.signing.keys import (
    KEY_FILE,
    PREVIOUS_FILE,
    RAW,
    PublicKeys,
    Signer,
    load_signer,
    public_keys,
    read_key_file,
    write_atomic,
    write_pub,
)

LOCK_FILE = "signing.lock"


@dataclass(frozen=True)
class Rotation:
    new: Signer
    old: list[str]  # the public keys still trusted, base64, newest first
    data_dir: Path | None  # where the new key was written; None: HITL_SIGNING_KEY's
    seed: str | None  # the new private seed, only where no file holds it

    @property
    def old_ids(self) -> list[str]:
        return list(PublicKeys.parse(",".join(self.old)).keys)

    def public_setting(self) -> str:
        """HITL_SIGNING_PUBLIC_KEY for an executor that trusts the new key and the old."""
        return ",".join([self.new.public_b64(), *self.old])


def _new_seed() -> str:
    raw = Ed25519PrivateKey.generate().private_bytes(
        RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return base64.b64encode(raw).decode()


def _b64s(keys: PublicKeys | None) -> list[str]:
    return [k["public_key"] for k in keys.listing()] if keys is not None else []


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def rotate(settings: Settings) -> Rotation:
    """Make a new signing key and keep every key trusted now for verifying."""
    seed = _new_seed()
    new = Signer.from_seed(seed)
    if settings.hitl_signing_key is not None or settings.hitl_signing_key_file is not None:
        # The secret is the operator's to replace (its value, or its file's): print it.
        current = load_signer(settings, create=False)
        old = _unique([current.public_b64(), *_b64s(public_keys(settings))])
        return Rotation(new, [k for k in old if k != new.public_b64()], None, seed)
    data_dir = settings.hitl_data_dir
    path = data_dir / KEY_FILE
    if not path.exists():
        raise ConfigError(msg.NO_KEY_TO_ROTATE.format(path=path))
    with _locked(data_dir):
        current = read_key_file(path)
        previous = data_dir / PREVIOUS_FILE
        kept = previous.read_text() if previous.is_file() else ""
        earlier = _b64s(PublicKeys.parse(kept, name=str(previous))) if kept.strip() else []
        old = _unique([current.public_b64(), *earlier])
        # Old key kept first: at no moment is a seal it made unverifiable.
        write_atomic(previous, "\n".join(old) + "\n", 0o644)
        write_atomic(path, seed + "\n", 0o600)
        write_pub(data_dir, new)
    return Rotation(new, old, data_dir, None)
