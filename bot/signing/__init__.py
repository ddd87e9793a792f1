"""The key `serve` signs decisions with, and the public keys executors check them by."""

from bot.signing.keys import (
    KEY_FILE,
    PREVIOUS_FILE,
    PUB_FILE,
    PublicKeys,
    Signer,
    key_id_of,
    load_signer,
    public_keys,
    require_public_keys,
    trusted_keys,
)

__all__ = [
    "KEY_FILE",
    "PREVIOUS_FILE",
    "PUB_FILE",
    "PublicKeys",
    "Signer",
    "key_id_of",
    "load_signer",
    "public_keys",
    "require_public_keys",
    "trusted_keys",
]
