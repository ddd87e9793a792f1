"""`hitl-bot doctor`'s retention line: on with a writable archive, off, or unable to write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.cli.doctor_lines import Status
from bot.cli.doctor_local import retention_line
from bot.config import Settings


@pytest.fixture(autouse=True)
def no_archive_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HITL_ARCHIVE_DIR", raising=False)  # the tests' own, from conftest


def _settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(hitl_data_dir=tmp_path, **kw)  # type: ignore[arg-type]


def test_on_with_a_writable_archive_passes_and_names_it(tmp_path: Path) -> None:
    line = retention_line(_settings(tmp_path, hitl_retention="30d"))
    assert line.status == Status.PASS
    assert "after 30d" in line.text and str(tmp_path / "archive") in line.text


def test_off_warns_that_the_store_grows(tmp_path: Path) -> None:
    line = retention_line(_settings(tmp_path, hitl_retention="off"))
    assert line.status == Status.WARN and "for ever" in line.text
    assert "HITL_RETENTION=90d" in line.fix


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_archive_it_cannot_write_warns(tmp_path: Path) -> None:
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o500)
    line = retention_line(_settings(tmp_path, hitl_archive_dir=locked / "archive"))
    assert line.status == Status.WARN and "nothing will leave Redis" in line.text


def test_an_archive_that_is_a_file_warns(tmp_path: Path) -> None:
    (tmp_path / "archive").write_text("not a directory")
    line = retention_line(_settings(tmp_path))
    assert line.status == Status.WARN and "cannot write its archive" in line.text
