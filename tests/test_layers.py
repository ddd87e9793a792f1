"""The layer contract (pyproject.toml, [tool.importlinter]) holds: `pytest` alone catches an
import that points upward, a Redis client outside bot/store, or slack, agent and api
importing each other, as `lint-imports` in .ci/run does."""

from __future__ import annotations

from pathlib import Path

from importlinter.cli import lint_imports

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_every_import_keeps_the_layer_contract() -> None:
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True) == 0
