"""`hitl-bot mcp serve`: the gate as three MCP tools.

- `request_approval(tool, args, reason?)`: waits for the decision; the approved (maybe
  edited) args, or why not.
- `ask_human(question, options?)`: the first answer from the Slack thread, or the option
  a person chose by its button.
- `permission_prompt(tool_name, input)`: Claude Code's `--permission-prompt-tool`. It
  answers the JSON text `{"behavior":"allow","updatedInput":{...}}` or
  `{"behavior":"deny","message":"..."}`; the policy decides, so `review: none` tools
  pass at once and the rest wait for a person at their tier.

The client runs an approved call itself, so the request is claimed and closed as
handed over (`gating.hand_over`): nothing here learns how the call went.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from bot.errors import HitlError
from bot.mcp import gating
from bot.mcp import messages as msg
from bot.mcp.sessions import SessionRuns
from bot.sdk import Gate, Unanswered

log = logging.getLogger(__name__)

DEFAULT_ASK_TIMEOUT_S = 3600.0

REQUEST_APPROVAL_DOC = (
    "Ask a person (in Slack) to approve a call before you make it. Waits for the "
    'decision. Answers JSON: {"approved": true, "args": {...}} with the arguments to '
    'use (a person may have edited them), or {"approved": false, "reason": "..."}: '
    "then do not make the call."
)
ASK_HUMAN_DOC = (
    "Ask a person a question (in Slack) and wait for the answer. With `options` (at most 10, "
    "each at most 75 characters), the person picks one by its button and the answer is "
    "the option chosen."
)
PERMISSION_PROMPT_DOC = (
    "Claude Code's --permission-prompt-tool: decides whether a tool call may run, by the "
    "hitl-bot policy, asking a person in Slack when the policy says so."
)


def build_server(
    gate: Gate,
    *,
    ask_timeout_s: float = DEFAULT_ASK_TIMEOUT_S,
    name: str = "hitl",
    runs: SessionRuns | None = None,
) -> MCPServer[Any]:
    """The three tools; every call belongs to the run of `runs`, which people steer and
    stop from Slack."""
    session = runs or SessionRuns(None)
    run_id, title = session.run_id, session.title

    server: MCPServer[Any] = MCPServer(name, instructions=REQUEST_APPROVAL_DOC, log_level="WARNING")
    waits = ToolAnnotations(read_only_hint=True, open_world_hint=True)

    @server.tool(description=REQUEST_APPROVAL_DOC, annotations=waits, structured_output=False)
    async def request_approval(tool: str, args: dict[str, Any], reason: str | None = None) -> str:
        if reason:
            # The card has no field for it yet; the operator's log keeps it beside the id.
            log.info("approval_reason", extra={"tool": tool, "reason": reason[:500]})
        try:
            req = await gating.decided(gate, tool, args, run_id=run_id, run_title=title)
            await gating.hand_over(gate, req, via="request_approval")
        except gating.Refused as exc:
            return json.dumps({"approved": False, "reason": str(exc)})
        decider = req.resolution.actor if req.resolution else None
        return json.dumps(
            {
                "approved": True,
                "args": req.args,
                "edited": req.original_hash is not None,
                "decided_by": decider,
                "request_id": req.id,
            }
        )

    @server.tool(description=ASK_HUMAN_DOC, annotations=waits, structured_output=False)
    async def ask_human(question: str, options: list[str] | None = None) -> str:
        try:
            return await gate.ask(
                question, timeout=ask_timeout_s, run_id=run_id, options=options or ()
            )
        except Unanswered as exc:
            raise ToolError(msg.ASK_UNANSWERED.format(error=exc)) from None
        except HitlError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(description=PERMISSION_PROMPT_DOC, annotations=waits, structured_output=False)
    async def permission_prompt(
        tool_name: str, input: dict[str, Any], tool_use_id: str | None = None
    ) -> str:
        return await permission(gate, tool_name, input, run_id=run_id, run_title=title)

    return server


async def permission(
    gate: Gate,
    tool_name: str,
    tool_input: dict[str, Any],
    *,
    run_id: str | None = None,
    run_title: str | None = None,
) -> str:
    """The answer Claude Code expects, as JSON text; anything but an approval denies,
    a person's correction with their words."""
    try:
        req = await gating.decided(gate, tool_name, tool_input, run_id=run_id, run_title=run_title)
        await gating.hand_over(gate, req, via="permission_prompt")
    except gating.Refused as exc:
        return json.dumps({"behavior": "deny", "message": str(exc)})
    return json.dumps({"behavior": "allow", "updatedInput": req.args})
