"""An upstream MCP server for the gateway's tests, written with the SDK.

`lookup` is free (the test policy says `review: none`), `delete` is gated, and
`crash` kills the process mid-call. Every call that runs appends one JSON line to
$UPSTREAM_LOG, so a test sees what ran, with which arguments, how many times; so does
the start of the process (tool "start"), which `Setup.ran` leaves out.

Run: python -m tests.mcp.upstream_server [--port N]   (stdio without --port)
"""

from __future__ import annotations

import json
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

server: MCPServer = MCPServer("upstream-demo", log_level="WARNING")


def _ran(tool: str, **args: object) -> None:
    with open(os.environ["UPSTREAM_LOG"], "a") as f:
        f.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool()
def lookup(key: str) -> str:
    """Read a value (harmless); "missing" is a tool error."""
    _ran("lookup", key=key)
    if key == "missing":
        raise ToolError("no such key: missing")
    return f"value of {key}"


@server.tool()
def delete(path: str, recursive: bool = False) -> str:
    """Delete a path (needs a person)."""
    _ran("delete", path=path, recursive=recursive)
    return f"deleted {path}" + (" recursively" if recursive else "")


class Booking(BaseModel):
    date: str = Field(description="the day, YYYY-MM-DD")
    guests: int = Field(description="how many people")
    window: bool = False


class Wipe(BaseModel):
    sure: bool


@server.tool()
async def book(room: str, ctx: Context) -> str:
    """Book a room, asking the user for the details (an elicitation, form mode)."""
    got = await ctx.elicit(f"Booking {room}: which day, for how many?", Booking)
    _ran("book", room=room, action=got.action)
    if got.action != "accept" or got.data is None:
        return f"not booked: {got.action}"
    d = got.data
    return f"booked {room} on {d.date} for {d.guests}" + (" by the window" if d.window else "")


@server.tool()
async def wipe(ctx: Context) -> str:
    """Ask one yes/no question before wiping."""
    got = await ctx.elicit("Wipe the scratch disk?", Wipe)
    if got.action != "accept" or got.data is None:
        return f"kept: {got.action}"
    return "wiped" if got.data.sure else "kept: no"


@server.tool()
def crash() -> str:
    """Die in the middle of the call, as a buggy server would."""
    _ran("crash")
    os._exit(3)


if __name__ == "__main__":
    _ran("start")  # so a test sees when the gateway started it
    if "--port" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
        server.run("streamable-http", port=port)
    else:
        server.run()
