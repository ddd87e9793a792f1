"""Schemathesis against the served API: no input gives a 500, every answer fits the schema."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from redis.asyncio import Redis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from bot.api import create_app
from bot.core.policy import DEFAULT_POLICY, parse_policy
from tests.api.conftest import AUTH
from tests.api.live import LiveServer, live_server, make_runtime
from tests.conftest import QUORUM_POLICY

# The OpenAPI document does not depend on the store: build it with a client never connected.
schema = schemathesis.openapi.from_dict(
    create_app(make_runtime(Redis.from_url("redis://unused"), DEFAULT_POLICY)).openapi()
)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


@pytest.fixture(scope="module")
def fuzz_server(redis_url: str) -> Iterator[LiveServer]:
    # Short long-polls: a generated ?wait=60 on a real id must not stall the run.
    with live_server(redis_url, parse_policy(QUORUM_POLICY), max_wait_s=0.2) as server:
        yield server


@schema.parametrize()
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_input_makes_a_500(case: schemathesis.Case, fuzz_server: LiveServer) -> None:
    case.call_and_validate(base_url=fuzz_server.url, headers=AUTH, checks=CHECKS)
