"""The SDK page (docs/sdk.md) shows the tested recipes, not a copy that can drift from them."""

from __future__ import annotations

import inspect
import re
import textwrap
from pathlib import Path

import bot.sdk
from bot.errors import HitlError
from tests.support.docpages import page

ROOT = Path(__file__).resolve().parents[2]
SDK_PAGE = page("sdk.md")
EXCERPT = re.compile(r"<!-- excerpt: (?P<path>\S+) -->\n```python\n(?P<code>.*?)```", re.S)
RECIPES = {
    "examples/openai_agents_refund.py",
    "examples/langgraph_refund.py",
    "examples/pydantic_ai_refund.py",
    "examples/openai_refund.py",
}


def _appears_in(code: str, source: str) -> bool:
    """`code` is a run of whole lines of `source`, give or take a common indent."""
    want = textwrap.dedent(code).splitlines()
    lines = source.splitlines()
    return any(
        textwrap.dedent("\n".join(lines[i : i + len(want)])).splitlines() == want
        for i in range(len(lines) - len(want) + 1)
    )


def test_every_sdk_page_excerpt_is_verbatim_in_its_example() -> None:
    excerpts = [(m["path"], m["code"]) for m in EXCERPT.finditer(SDK_PAGE)]
    assert {path for path, _ in excerpts} == RECIPES  # one or more per recipe, none stale
    for path, code in excerpts:
        assert _appears_in(code, (ROOT / path).read_text()), f"docs/sdk.md's {path} drifted"


def test_every_runtime_page_excerpt_is_verbatim_in_its_example() -> None:
    excerpts = [
        (doc.name, m["path"], m["code"])
        for doc in sorted((ROOT / "docs" / "runtimes").glob("*.md"))
        for m in EXCERPT.finditer(doc.read_text())
    ]
    assert ("claude-agent-sdk-python.md", "examples/claude_agent_sdk_refund.py") in {
        (doc, path) for doc, path, _ in excerpts
    }
    for doc, path, code in excerpts:
        assert _appears_in(code, (ROOT / path).read_text()), f"docs/runtimes/{doc}: {path} drifted"


def test_every_recipe_is_linked_and_runs_main_as_a_script() -> None:
    for path in RECIPES:
        assert f"](../{path})" in SDK_PAGE, path  # docs/ links up to the root
        *_, guard, call = (ROOT / path).read_text().rstrip().splitlines()
        assert guard == 'if __name__ == "__main__":', path
        assert call in ("    main()", "    asyncio.run(main())"), path


def test_the_sdk_page_error_tree_names_every_sdk_error() -> None:
    tree = SDK_PAGE[SDK_PAGE.index("HitlError\n├──") :]
    tree = tree[: tree.index("```")]
    for name in bot.sdk.__all__:
        obj = getattr(bot.sdk, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            assert issubclass(obj, HitlError), name
            assert name in tree, f"{name} is missing from docs/sdk.md's error tree"
    for name in ("ConfigError", "StoreUnavailable", "PayloadError", "InvalidTransition"):
        assert name in tree, name
