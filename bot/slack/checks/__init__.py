"""What serve checks in Slack before it takes a click: the bot token's scopes, the
policy's user groups and channel principals (resolved once, when the policy loads), and
what `hitl-bot doctor` and `preflight` print of them."""
