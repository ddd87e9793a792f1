"""An upstream MCP server whose tools carry MCP annotations, for the gateway's tier tests.

Run: python -m tests.mcp.annotated_server   (stdio)
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server: MCPServer = MCPServer("upstream-annotated", log_level="WARNING")

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
LOCAL_DELETE = ToolAnnotations(destructive_hint=True, open_world_hint=False)
REMOTE_DELETE = ToolAnnotations(read_only_hint=False)  # the spec: destructive, open world


@server.tool(annotations=READ_ONLY)
def peek(key: str) -> str:
    return f"value of {key}"


@server.tool(annotations=LOCAL_DELETE)
def scrub(path: str) -> str:
    return f"scrubbed {path}"


@server.tool(annotations=REMOTE_DELETE)
def wipe(bucket: str) -> str:
    return f"wiped {bucket}"


@server.tool(annotations=REMOTE_DELETE)
def pinned(bucket: str) -> str:
    """Destructive, but the policy names its tier: the policy wins."""
    return f"pinned {bucket}"


@server.tool(annotations=REMOTE_DELETE)
def free(bucket: str) -> str:
    """Destructive; the policy says `review: none` and names no tier."""
    return f"freed {bucket}"


@server.tool()
def plain(key: str) -> str:
    """No annotations: the policy's default tier."""
    return f"plain {key}"


if __name__ == "__main__":
    server.run()
