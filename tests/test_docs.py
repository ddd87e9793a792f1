"""The docs hold together: every relative link leads to a file (and heading) that exists,
every path they name exists, the README stays a five-minute read, its two commands are
the ones CI runs, and the policy example parses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.core.policy import parse_policy
from tests.support.docpages import README, ROOT, page, pages

README_MAX_LINES = 260
DEMO_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[server]' && .venv/bin/hitl-bot demo"
)
TEST_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/pytest -n 4"
)
# The pages beside the README that it links to; they link into docs/ as well.
ROOT_PAGES = ("CONTRIBUTING.md", "CHANGELOG.md")

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks, where links and headings mean something."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def _anchors(text: str) -> set[str]:
    found: set[str] = set()
    for line in _prose(text):
        if m := HEADING.match(line):
            slug, n = _slug(m[1]), 0
            while (slug if n == 0 else f"{slug}-{n}") in found:
                n += 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def _all_pages() -> dict[Path, str]:
    found = pages()
    for name in ROOT_PAGES:
        found[ROOT / name] = (ROOT / name).read_text(encoding="utf-8")
    return found


def _links() -> list[tuple[str, str]]:
    """(page, target) for every relative link, the page as a path from the repo's root."""
    return sorted(
        {
            (str(path.relative_to(ROOT)), target)
            for path, text in _all_pages().items()
            for line in _prose(text)
            for target in LINK.findall(line)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)  # https:, mailto: lead elsewhere
        }
    )


def test_the_docs_have_links_to_check() -> None:
    sources = {source for source, _ in _links()}
    assert sources >= {"README.md", "docs/sdk.md", "docs/troubleshooting.md", "CONTRIBUTING.md"}


@pytest.mark.parametrize(("source", "target"), _links())
def test_every_relative_link_points_at_a_file_and_heading_that_exist(
    source: str, target: str
) -> None:
    where, _, anchor = target.partition("#")
    dest = (ROOT / source).parent.joinpath(where).resolve() if where else ROOT / source
    assert dest.exists(), f"{source}: {target} leads nowhere"
    assert dest.is_relative_to(ROOT), f"{source}: {target} leaves the repository"
    if anchor:
        assert dest.suffix == ".md", f"{source}: {target}: only a page has headings"
        anchors = _anchors(dest.read_text(encoding="utf-8"))
        assert anchor in anchors, f"{source}: no heading #{anchor} in {where or source}"


def test_the_readme_links_every_docs_page() -> None:
    text = page("README.md")
    for path in pages():
        if path != README:
            name = path.relative_to(ROOT).as_posix()
            assert f"]({name})" in text, f"the README does not link {name}"


def test_the_readme_stays_a_five_minute_read() -> None:
    lines = page("README.md").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_readme_gives_the_two_commands_and_ci_runs_the_second_verbatim() -> None:
    text = page("README.md")
    assert f"```sh\n{DEMO_COMMAND}\n```" in text
    assert f"```sh\n{TEST_COMMAND}\n```" in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert TEST_COMMAND in ci, ".ci/run must run the README's test command, verbatim"


def test_the_policy_example_parses() -> None:
    text = page("configuration.md")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    policies = [yaml.safe_load(b) for b in blocks]
    assert policies and all(parse_policy(p) for p in policies)


CODE_PATH = re.compile(r"`((?:bot|tests|bench|examples|\.ci)/[\w./-]*)`")


def test_every_path_the_docs_name_exists() -> None:
    named = {
        (str(path.relative_to(ROOT)), where)
        for path, text in _all_pages().items()
        for where in CODE_PATH.findall(text)
    }
    assert named, "the docs name no path: the pattern is wrong"
    missing = sorted(f"{source}: {where}" for source, where in named if not (ROOT / where).exists())
    assert not missing, "paths that do not exist: " + ", ".join(missing)
