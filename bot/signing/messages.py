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
# HITL_SIGNING_KEY_FILE: a secret an orchestrator mounts, so a group may share it (a
# Kubernetes secret with fsGroup is 0440); every other user may not.
SECRET_FILE_OPEN = (
    "HITL_SIGNING_KEY_FILE {path} can be read by every user (mode {mode:o}): "
    "`chmod 600 {path}` (or 640 for a group the bot runs in)"
)
SECRET_FILE_UNREADABLE = (
    "HITL_SIGNING_KEY_FILE {path} cannot be read ({why}); fix: point it at the file holding "
    "serve's key, readable by the user the bot runs as"
)
SECRET_FILE_BAD = (
    "HITL_SIGNING_KEY_FILE {path} does not hold an Ed25519 key: give the base64 of its "
    "32-byte seed, on one line"
)
KEY_TWICE = (
    "both HITL_SIGNING_KEY and HITL_SIGNING_KEY_FILE are set; fix: set one of them, so "
    "there is no doubt which key serve signs with"
)
KEY_FILE_BAD = "the signing key file {path} is damaged: remove it to make a new one, or restore it"
FORGED = (
    "request {id} was not approved by this bot: {why}. It will not run "
    "(audited as forged_decision)."
)
KEPT_MOVING = "request {id} kept changing while it was checked, so it was not claimed"
NO_KEY = (
    "no signing key here: neither HITL_SIGNING_KEY(_FILE) nor {path} (serve makes it on its "
    "first start); run this where serve runs, or set HITL_SIGNING_KEY"
)
NO_KEY_TO_ROTATE = (
    "no signing key to rotate: neither HITL_SIGNING_KEY nor {path} (serve makes it on its "
    "first start); run this where serve runs, with its HITL_DATA_DIR"
)
