"""The user docs as the tests read them: the README (the front door) and the pages under
docs/ that hold the detail. A test names the page that holds what it checks."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """One page's text: "README.md", or a page of docs/ by its path there ("sdk.md",
    "runtimes/vercel-ai-sdk.md")."""
    path = README if name == README.name else DOCS / name
    return path.read_text(encoding="utf-8")


def pages() -> dict[Path, str]:
    """The README and every page of docs/ (docs/runtimes/ too), by path."""
    found = [README, *sorted(DOCS.rglob("*.md"))]
    return {path: path.read_text(encoding="utf-8") for path in found}
