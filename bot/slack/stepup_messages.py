"""What Slack says about passkeys: the step-up link, and `/hitl passkey`."""

from __future__ import annotations

# The link first: a digest's answer cuts each line at 200 characters.
STEP_UP_LINK = (
    ":closed_lock_with_key: <{url}|Confirm with your passkey> to approve `{id}`: nothing "
    "is approved until you do (the link is yours alone, works once, until {until})."
)
# A modal shows 150 characters of a field error: the link must fit whole.
STEP_UP_LINK_PLAIN = "Confirm with your passkey (nothing is approved yet): {url}"
STEP_UP_NONE = (
    ":closed_lock_with_key: Approving `{id}` needs a passkey, and you have none enrolled. "
    "Nothing is approved. Run `/hitl passkey` to enroll one, then approve again."
)
STEP_UP_NONE_PLAIN = (
    "This needs your passkey and you have none: run /hitl passkey, then approve again."
)
PASSKEY_ENROLL = (
    ":closed_lock_with_key: <{url}|Enroll a passkey> for approvals that need one (the "
    "link is yours alone, works once, until {until}).\n{listing}"
)
PASSKEY_NONE_YET = "You have no passkey enrolled yet."
PASSKEY_LIST = "Your passkeys: {items}. Remove one with `/hitl passkey remove ID`."
PASSKEY_ITEM = "`{id}` (enrolled {at})"
PASSKEY_REMOVED = (
    "Removed your passkey `{id}`; an approval confirmed with it is refused from now on."
)
PASSKEY_NOT_YOURS = "You have no passkey `{id}`; `/hitl passkey` lists yours."
PASSKEY_OFF = "Passkeys are off: no tier of the policy asks for one, and HITL_PUBLIC_URL is unset."
