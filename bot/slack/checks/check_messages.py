"""What the start checks of the token and the policy's user groups say (bot.slack.checks.scopes,
bot.slack.checks.preflight): each names what is missing, what breaks, and the fix."""

from __future__ import annotations

# What breaks without each scope manifest.yml asks for.
BREAKS_MENTIONS = "a mention of the bot does not start a run"
BREAKS_CHANNEL_HISTORY = (
    "replies in a card's thread (answers, steering) in public channels are not read, and a "
    "card posted before a crash is posted again"
)
BREAKS_CHANNELS_READ = (
    "approvers named by a public channel cannot be listed: nobody in it can approve"
)
BREAKS_GROUPS_READ = (
    "approvers named by a private channel cannot be listed: nobody in it can approve"
)
BREAKS_GROUPS_HISTORY = "replies in a card's thread in private channels are not read"
BREAKS_CHAT_WRITE = "no card, update or thread line can be posted: nobody is asked"
BREAKS_CHAT_WRITE_PUBLIC = "escalations to public channels the bot has not joined are not posted"
BREAKS_COMMANDS = "/hitl does not answer"
BREAKS_IM_WRITE = "escalation DMs to assignees cannot be opened"
BREAKS_IM_HISTORY = "after a crash mid-post, an escalation DM already sent is sent again"
BREAKS_REACTIONS = "steering and answers are not acknowledged with a reaction"
BREAKS_USERGROUPS = (
    "approvers named by a user group count as not members: nobody in the group can approve"
)
BREAKS_USERS_READ = "the App Home and audit views show people as ids, not names"

SCOPE_FIX = (
    "add it under OAuth & Permissions > Bot Token Scopes (manifest.yml lists them all), "
    "reinstall the app and export the new SLACK_BOT_TOKEN"
)
SCOPE_NEEDED = (
    "The bot token lacks the scope {scope}, which the policy needs ({where}): {breaks}. "
    "Fix: " + SCOPE_FIX + "."
)
SCOPE_MISSING = "The bot token lacks the scope {scope}: {breaks}. Fix: " + SCOPE_FIX + "."
SCOPES_UNREAD = (
    "Slack's answer carried no {header} header, so the token's scopes were not checked; "
    "compare them with manifest.yml under OAuth & Permissions."
)

GROUP_UNKNOWN = (
    "{where}: the user group {name} could not be resolved in Slack ({error}), so nobody "
    "in it could approve. Fix: use the id of an existing, enabled user group (its S… id), "
    "or remove it."
)
GROUP_EMPTY = "{where}: the user group {name} has no members: nobody in it can approve."
PREFLIGHT_UNCHECKED = (
    "Could not reach Slack to check the token's scopes and the policy's user groups "
    "({error}); they are used unchecked."
)
GROUPS_CHECKED = "User groups resolved in Slack: {names}."
