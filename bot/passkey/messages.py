"""What the passkey pages say."""

from __future__ import annotations

ENROLL_TITLE = "Enroll a passkey"
ENROLL_INTRO = (
    "Approvals that need a step-up are confirmed with this passkey. It is enrolled for "
    "the Slack user {user}; your device asks you to unlock it."
)
ENROLL_BUTTON = "Enroll a passkey"
ENROLLED = "Passkey enrolled ({id}). You can close this page."
CONFIRM_TITLE = "Confirm your approval"
CONFIRM_INTRO = "You are approving exactly this call, as {user}. Check it before you confirm."
CONFIRM_BUTTON = "Approve with my passkey"
F_TOOL, F_ARGS, F_HASH, F_REQUESTER, F_DEADLINE, F_REQUEST = (
    "Tool", "Arguments", "Payload hash", "Asked by", "Decide by", "Request",
)  # fmt: skip
F_EDITED = "Arguments (as you edited them)"
F_CHOSEN = "Arguments (the candidate you chose)"
APPROVED = "Approved with your passkey. The card in Slack says so."
APPROVED_PARTLY = (
    "Your approval is recorded with your passkey ({n} of {total}); the call waits for the others."
)
ALREADY = "You had approved this already; nothing changed."
WORKING = "Waiting for your passkey…"
NO_WEBAUTHN = "This browser cannot use passkeys; open the link on a device that can."
BROWSER_REFUSED = "Your device did not confirm; nothing was approved. Try again."
UNKNOWN_LINK = (
    "This link is unknown or too old; nothing was done. Ask for a new one in Slack "
    "(approve again, or run /hitl passkey)."
)
REPLAYED = (
    "This link was used already, and works once; nothing was approved. Approve again in "
    "Slack for a new link."
)
EXPIRED = "This link expired; nothing was approved. Approve again in Slack for a new link."
OTHER_REQUEST = (
    "This passkey answer was made for another link (another request or decision); "
    "nothing was approved. Confirm on the page of this request."
)
OTHER_VERSION = (
    "The request changed since this link was made (version {was}, now {now}); nothing "
    "was approved. Look at the card again, and approve again if you still agree."
)
OTHER_PERSON = (
    "That passkey is someone else's; this link is for {user} alone. Nothing was approved."
)
REVOKED = (
    "That passkey is not enrolled for {user} (removed or revoked); nothing was approved. "
    "Enroll one with /hitl passkey."
)
FAILED = "Your passkey's answer did not verify ({why}); nothing was approved."
ENROLL_FAILED = "The passkey could not be enrolled ({why}); ask for a new link with /hitl passkey."
KNOWN_CREDENTIAL = "that passkey is enrolled already"
REFUSED = "Nothing was approved: {why}"
BAD_BODY = "The page sent something that is not a passkey answer; nothing was done."
