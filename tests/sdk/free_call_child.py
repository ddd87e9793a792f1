"""A direct-mode SDK gate in a process of its own, for the kill -9 test: one free call
whose create is written without waiting, and whose function never returns. The marker
file gets the request id once the function runs.

    python -m tests.sdk.free_call_child REDIS_URL MARKER_FILE
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from pydantic import SecretStr

from bot.config import Settings
from bot.core.policy import parse_policy
from bot.sdk import Gate, direct, require_approval
from tests.conftest import QUORUM_POLICY
from tests.support.children import unawaited_creates


async def main(url: str, marker: Path) -> None:
    gate = Gate(
        settings=Settings(redis_url=SecretStr(url)),
        policy=parse_policy(QUORUM_POLICY),
        requester="agent-7",
    )
    sent = unawaited_creates(direct)  # the calls whose create was written without waiting

    @require_approval(gate, tool="move_claw")
    async def move_claw(dir: str) -> str:
        if dir == "warm":  # the first call takes the usual path, which loads the script
            return dir
        part = marker.with_suffix(".part")
        part.write_text(sent[-1] if sent else "not sent")
        os.replace(part, marker)  # whole, or not there
        await asyncio.Event().wait()  # until killed
        return dir

    await move_claw("warm")
    await move_claw("left")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
