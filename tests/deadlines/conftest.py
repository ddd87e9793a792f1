"""The sweeper runs in serve, with its key: its store signs the policy's defaults."""

from __future__ import annotations

import pytest

from bot.store.requests import RequestStore


@pytest.fixture
def store(signed_store: RequestStore) -> RequestStore:
    return signed_store
