""".ci/lowest.txt pins every dependency at its lower bound in pyproject.toml.

.ci/run tests both ends of each range: the newest releases in one venv, these pins in
another. A dependency left out of the pins, or a bound moved without its pin, would be
a lower bound no test has run.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
# What a user installs: the runtime dependencies and the extras that are features.
USER_EXTRAS = ("server", "recipes", "mcp", "uvloop")
# Test tools whose floors the lowest run also takes: the ones that generate the inputs
# of property and fuzz tests (older releases generate differently), and the layer
# contract's checker (its floor is the first release with the contracts we state).
PINNED_TEST_TOOLS = ("hypothesis", "schemathesis", "import-linter")


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def lower_bounds() -> dict[str, Version]:
    project = pyproject()["project"]
    extras = project["optional-dependencies"]
    lines = project["dependencies"] + [line for name in USER_EXTRAS for line in extras[name]]
    # The build backend too: the lowest run builds the project with its floor.
    lines += pyproject()["build-system"]["requires"]
    lines += [
        line
        for line in extras["test"]
        if canonicalize_name(Requirement(line).name) in PINNED_TEST_TOOLS
    ]
    bounds = {}
    for req in map(Requirement, lines):
        lows = [Version(spec.version) for spec in req.specifier if spec.operator == ">="]
        assert len(lows) == 1, f"{req}: one >= lower bound, so .ci/lowest.txt can pin it"
        bounds[canonicalize_name(req.name)] = lows[0]
    return bounds


def pins() -> dict[str, Version]:
    found = {}
    for line in (ROOT / ".ci" / "lowest.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            found[canonicalize_name(name)] = Version(version.strip())
    return found


def test_every_lower_bound_is_pinned_for_the_lowest_run() -> None:
    assert pins() == lower_bounds()


def test_the_build_backend_floor_reads_the_license_as_written() -> None:
    # `license = "Apache-2.0"` (a PEP 639 SPDX string) is refused by setuptools before
    # 77, so a build with the floor pyproject.toml allowed failed.
    assert isinstance(pyproject()["project"]["license"], str)
    assert lower_bounds()["setuptools"] >= Version("77")
