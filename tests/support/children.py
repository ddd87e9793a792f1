"""A test's own process, killed with -9 at the moment it says it reached: what a crash
mid-call leaves behind, with nothing of the dying process's cleanup running."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from types import ModuleType

from bot.store.creating import Prepared
from bot.store.free_call import SentCreate
from bot.store.requests import RequestStore
from tests.support.poll import eventually

ROOT = Path(__file__).resolve().parents[2]


async def kill_9_when_written(marker: Path, module: str, *args: str, timeout_s: float) -> None:
    """Run `python -m module *args` from this checkout, without the caller's HITL_
    settings; once it has written `marker`, kill it with SIGKILL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HITL_")}
    env["PYTHONPATH"] = str(ROOT)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, *args, cwd=ROOT, env=env
    )
    try:
        await eventually(marker.exists, timeout_s=timeout_s, what=f"{module} reaching its mark")
        child.kill()
        assert await child.wait() == -signal.SIGKILL
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()


def unawaited_creates(module: ModuleType) -> list[str]:
    """The ids of the requests whose create `module` (a gate's or a backend's, which
    calls bot.gate.filing's `file_claimed`) wrote without waiting, from now on, in
    order: a child marks the call to be killed in only once it knows it took that path."""
    sent: list[str] = []
    plain = module.file_claimed

    async def file_claimed(store: RequestStore, prep: Prepared) -> SentCreate | None:
        got: SentCreate | None = await plain(store, prep)
        if got is not None:
            sent.append(got.request.id)
        return got

    module.file_claimed = file_claimed
    return sent
