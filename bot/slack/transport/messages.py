"""What a sender of a request to /slack/events (or a Socket Mode envelope) is told,
and what serve says when Slack cannot reach it (bot/slack/transport)."""

# -- what comes in from Slack (bot/slack/transport/inbound.py, http.py, socket_mode.py) ------------
SLACK_UNSIGNED = "The request is not signed with this app's signing secret."
SLACK_BAD_BODY = "The Slack request body is not valid JSON (nor a form with a JSON payload)."
SLACK_NOT_UTF8 = "The Slack request body is not UTF-8."
SLACK_TOO_DEEP = "The Slack request body nests deeper than {limit} levels."
SLACK_BAD_PAYLOAD = "Not a Slack payload this app can read: {problem}."
# {kind}: the exception Bolt's context reader raised; Slack always sends a
# workspace (`team`, `team_id`, `user.team_id` or `view.team_id`) with a payload.
SLACK_BOLT_UNREADABLE = (
    "is missing a field Slack always sends (Bolt's reader raised {kind}; "
    "a workspace id is the usual one)"
)
SLACK_NEEDS_SECRET = (
    "A Slack endpoint without a signing secret would accept forged requests; "
    "set SLACK_SIGNING_SECRET or use Socket Mode (SLACK_APP_TOKEN)."
)
SOCKET_MODE_DOWN = "Slack Socket Mode is not connected: {reason}"
