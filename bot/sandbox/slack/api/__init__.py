"""The emulator's Web API (`/api/<method>`): the methods the bot calls, with Slack's
membership rules, scopes, rate limits and the fault switches tests turn on."""
