"""`hitl-bot mcp`: the gate for any MCP client.

- `server`: an MCP server with `request_approval`, `ask_human` and `permission_prompt`
  (Claude Code's `--permission-prompt-tool`).
- `proxy`: a gateway in front of upstream MCP servers; every `tools/call` waits on the
  same policy gate as the worker's tools.

Both sit on `bot.sdk.Gate` (HTTP API or Redis directly), so the policy, deadlines,
escalation, edits and the audit are the bot's own; this package only speaks MCP.
Needs the optional extra: `pip install 'hitl-bot[mcp]'`.
"""
