"""`hitl-bot claude-code`: Claude Code's `PreToolUse` hook, gated by hitl-bot.

- `hook`: Claude Code runs it before every tool call it matches; it asks the gate under
  the tool's own name, waits for the person in Slack when the policy says so, and
  answers allow (with the approved, maybe edited, input) or deny (with the reason the
  model reads). The session is the run: people steer and stop it from Slack.
- `install`: writes that hook into a project's `.claude/settings.json`.

The hook is a short-lived process per tool call, so it imports only the SDK's side of
the gate (`bot.sdk`), never the MCP SDK or the server.
"""
