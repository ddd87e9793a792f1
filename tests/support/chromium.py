"""Where the browser tests find Chromium, and what they do without it.

Locally a missing Chromium skips them with the reason; under CI (CI=true) it fails
them, so a broken install can never pass as a green run that tested no browser.
"""

from __future__ import annotations

import os
import shutil

import pytest

INSTALL = "apt-get install -y chromium"


def find() -> str | None:
    names = ("chromium", "chromium-browser", "google-chrome")
    return next((p for p in map(shutil.which, names) if p), None)


def require(path: str | None) -> str:
    """`path` if Chromium is there; otherwise skip, or fail when CI=true."""
    if path and os.path.exists(path):
        return path
    why = f"no Chromium at {path or 'any of chromium, chromium-browser, google-chrome'}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{why}, and CI=true: browser tests may not be skipped in CI ({INSTALL})")
    pytest.skip(f"{why} ({INSTALL})")
