"""The TypeScript client (clients/typescript) as a user gets it: `npm pack` builds the
tarball (its prepack compiles with the pinned `tsc` from the npm registry), and a fresh
project `npm install`s that tarball. Beside it, the agent frameworks its adapters are
tested against (tests/typescript/runtimes: `ai`, `@openai/agents`, pinned with their
package-lock.json), `npm ci`'d from the npm registry, with the same tarball.

`python -m tests.typescript.build` does it once (CI does, before the tests, as it
installs Chromium), which also fills npm's cache. Where it fails: with CI=true the tests
fail with the command's error; otherwise they skip and say which command failed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
RUNTIMES = Path(__file__).resolve().parent / "runtimes"
NPM_FLAGS = ["--no-audit", "--no-fund", "--loglevel=error"]


def _run(argv: list[str], cwd: Path) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {(done.stderr or done.stdout)[-2000:]}")
    return done.stdout


def build(into: Path) -> Path:
    """A project under `into` with the packed client installed; raises RuntimeError
    naming the command that failed."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("node and npm are not installed (apt-get install nodejs npm)")
    src = into / "package"
    shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("node_modules", "dist", "*.tgz"))
    _run([npm, "ci", *NPM_FLAGS], src)  # the pinned typescript, from package-lock.json
    packed = into / "packed"
    packed.mkdir()
    out = _run([npm, "pack", "--json", "--pack-destination", str(packed), *NPM_FLAGS], src)
    tarball = packed / json.loads(out)[0]["filename"]
    project = into / "project"
    project.mkdir()
    (project / "package.json").write_text(
        json.dumps({"name": "uses-hitl-client", "private": True, "type": "module"})
    )
    _run([npm, "install", *NPM_FLAGS, str(tarball)], project)
    # its compiler, to type-check a user's code against the shipped .d.ts
    (project / "tsc").symlink_to(src / "node_modules" / "typescript" / "bin" / "tsc")
    return project


def with_runtimes(project: Path) -> Path:
    """Beside `project` (from `build`), a project with the pinned agent frameworks and
    the same packed client; raises RuntimeError naming the command that failed."""
    npm = shutil.which("npm") or "npm"
    tarball = next((project.parent / "packed").glob("*.tgz"))
    runtimes = project.parent / "runtimes"
    runtimes.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy(RUNTIMES / name, runtimes / name)
    _run([npm, "ci", *NPM_FLAGS], runtimes)  # exactly the lock's versions
    _run([npm, "install", "--no-save", *NPM_FLAGS, str(tarball)], runtimes)
    (runtimes / "tsc").symlink_to(project / "tsc")
    return runtimes


def built_or_skip(into: Path, *, runtimes: bool = False) -> Path:
    import pytest  # here: CI runs this module with a bare python3 before the venv exists

    what = "the agent frameworks" if runtimes else "the TypeScript client"
    try:
        return with_runtimes(into / "project") if runtimes else build(into)
    except (RuntimeError, OSError, subprocess.TimeoutExpired, StopIteration) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{what} could not be built and CI=true: {exc}")
        pytest.skip(f"{what} could not be built: {exc}")


if __name__ == "__main__":
    try:
        with tempfile.TemporaryDirectory() as tmp:
            print(with_runtimes(build(Path(tmp))))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
