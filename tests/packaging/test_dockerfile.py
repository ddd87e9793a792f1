"""The image recipe (no Docker engine runs here) and the wheel it installs."""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_dockerfile_is_multi_stage_slim_non_root_with_healthcheck() -> None:
    text = (ROOT / "Dockerfile").read_text()
    stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\w+))?", text, re.MULTILINE)
    assert len(stages) >= 2 and all("slim" in image for image, _ in stages)
    runtime = text.split("FROM", 2)[2]  # everything after the last stage starts
    assert re.search(r"^USER\s+(?!root)\w+", runtime, re.MULTILINE)
    assert "HEALTHCHECK" in runtime and "/healthz" in runtime
    assert re.search(r'^CMD \["hitl-bot", "serve"\]', runtime, re.MULTILINE)
    # Only the runtime wheel goes in: no test extras, no sources, no build tools.
    assert "[test]" not in text and "COPY tests" not in text
    assert "COPY --from=build /wheels" in runtime


@pytest.mark.timeout(300)
def test_the_wheel_builds_installs_and_runs_help(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    wheel = next(wheels.glob("hitl_bot-*.whl"))
    # A fresh venv that borrows the already-installed dependencies (no network here),
    # so what is tested is the wheel's own content, not the source tree.
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    purelib = subprocess.run(
        [
            env_dir / "bin" / "python",
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [env_dir / "bin" / "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [env_dir / "bin" / "hitl-bot", "--help"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    for command in ("demo", "serve", "worker", "pending", "audit", "policy"):
        assert command in out.stdout
    where = subprocess.run(
        [env_dir / "bin" / "python", "-c", "import bot; print(bot.__file__)"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert str(env_dir) in where.stdout  # the installed wheel, not the checkout
