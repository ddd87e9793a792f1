"""The browser tests' Chromium check: skipped locally, failed in CI."""

from __future__ import annotations

import pytest

from tests.support import chromium


def test_a_missing_chromium_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        chromium.require("/nonexistent/chromium")


def test_a_missing_chromium_skips_locally_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium"):
        chromium.require(None)


def test_a_present_chromium_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert chromium.require(__file__) == __file__
