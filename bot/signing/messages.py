"""What the signing keys say to a person: how to set them, and why a claim was refused."""

from __future__ import annotations

HOW_TO_SET = (
    "set HITL_SIGNING_PUBLIC_KEY to the key `hitl-bot keys show` prints where serve runs "
    "(or share serve's HITL_DATA_DIR, whose signing.pub it reads)"
)
NO_PUBLIC_KEY = "no signing key to verify decisions with: " + HOW_TO_SET
BAD_KEY = (
    "{name} is not an Ed25519 key: give the base64 of its 32 raw bytes "
    "(`hitl-bot keys show` prints the public one)"
)
KEY_FILE_OPEN = (
    "the signing key {path} can be read by other users (mode {mode:o}): "
    "`chmod 600 {path}`, or set HITL_SIGNING_KEY"
)
KEY_FILE_BAD = "the signing key file {path} is damaged: remove it to make a new one, or restore it"
FORGED = (
    "request {id} was not approved by this bot: {why}. It will not run "
    "(audited as forged_decision)."
)
KEPT_MOVING = "request {id} kept changing while it was checked, so it was not claimed"
NO_KEY = (
    "no signing key here: neither HITL_SIGNING_KEY nor {path} (serve makes it on its first "
    "start); run this where serve runs, or set HITL_SIGNING_KEY"
)
NO_KEY_TO_ROTATE = (
    "no signing key to rotate: neither HITL_SIGNING_KEY nor {path} (serve makes it on its "
    "first start); run this where serve runs, with its HITL_DATA_DIR"
)
