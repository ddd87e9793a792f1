"""Every word of the bot's modals: reject, edit, the full payload, an answer
(bot/slack/blocks/views.py, bot/slack/batch/card.py)."""

# -- modals (bot/slack/blocks/views.py) ----------------------------------------------------------
MODAL_CANCEL = "Cancel"
MODAL_CLOSE = "Close"
NOT_PENDING = "This request is no longer waiting for review ({state}); there is nothing to decide."
REJECT_TITLE = "Reject request"
# Slack draws every modal's submit button green, and gives apps no way to colour it:
# the label says what the green button sends.
REJECT_SUBMIT = "Send rejection"
REJECT_INTRO = "You are rejecting {tool} (request {id}, hash {hash}). The agent is told why."
REJECT_REASON_LABEL = "Reason"
REJECT_REASON_PLACEHOLDER = "Choose a reason"
REJECT_TEXT_LABEL = "Tell the agent more"  # Slack adds "(optional)" itself
REJECT_TEXT_HINT = "The agent reads this and may propose a corrected call."
EDIT_TITLE = "Edit and approve"
EDIT_SUBMIT = "Approve edited"
EDIT_INTRO = (
    "Change the arguments of {tool}, then approve the edited call in one step. "
    "The audit keeps the original payload hash {hash} and the new one."
)
EDIT_LABEL = "Arguments (JSON)"
EDIT_HINT = "A JSON object; it is checked against the tool's schema when you submit."
EDIT_QUORUM = (
    "Earlier approvals were for the original call and lapse: the edited call needs "
    "{quorum} approvals, and yours counts as one."
)
EDIT_TOO_LARGE = (
    "These arguments are {size} characters as JSON and Slack's text box holds {limit}, "
    "so editing here would lose part of them. Approve or reject the call as it is, "
    "or reject it and ask the agent for a corrected call."
)
EDIT_ERROR = ":warning: {error}"
PAYLOAD_TITLE = "Full payload"
ANSWER_TITLE = "Answer the agent"
ANSWER_SUBMIT = "Send answer"
ANSWER_LABEL = "Your answer"
