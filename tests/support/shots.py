"""Screenshots for the docs, taken by the browser tests that already drive the page.

A test that shows a feature calls `keep(page, "name")` once the page shows it. Normally
that only checks the page can be captured (into the test's tmp_path). With
`HITL_DOC_SHOTS=docs/img` the picture is written there as `name.png`, which is how the
images the docs show are made again:

    HITL_DOC_SHOTS=docs/img .venv/bin/pytest -k shot tests/e2e
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Page

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


async def keep(page: Page, name: str, tmp_path: Path) -> Path:
    """Capture the page as `name.png`: into HITL_DOC_SHOTS when set, else into tmp_path."""
    if not _NAME.match(name):
        raise ValueError(f"{name!r}: a screenshot's name is lower-case words joined by '-'")
    folder = Path(os.environ.get("HITL_DOC_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.png"
    await page.screenshot(path=str(target), full_page=False)
    assert target.stat().st_size > 0
    return target
