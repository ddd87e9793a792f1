"""The policy file, proposing a request from it, and the payload hash that binds a decision."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from bot.core.args.payload import MAX_PAYLOAD_BYTES, canonical_args, payload_hash
from bot.core.durations import parse_duration
from bot.core.machine import apply
from bot.core.models import ActionRequest, Decision, RiskTier
from bot.core.policy import DEFAULT_POLICY, Policy, load_policy, parse_policy
from bot.core.proposal import propose
from bot.core.states import Event, State
from bot.errors import ConfigError, PayloadError

MIN, HOUR, DAY = 60_000, 3_600_000, 86_400_000
T0 = 1_767_000_000_000
HANDOVER = 1_767_603_600_000  # 2026-01-05T09:00:00Z, the default rotation start

POLICY_YAML = """
default_tier: medium
tiers:
  low: {review_timeout: 4h, reviewers: {channels: ["#ops"]}, on_exhausted: auto_approved}
  medium:
    review_timeout: 30m
    reviewers: {channels: ["#ops"]}
    escalation: [{oncall: finance, timeout: 10m}, {users: [U_LEAD]}]
  high: {review_timeout: 15m, reviewers: {users: [U_BOSS]}, approvers: [U_BOSS, S_FIN]}
  critical:
    review_timeout: 5m
    reviewers: {channels: ["#ops"]}
    approvals_required: 2
    approvers: [S_OPS]
tools:
  refund:
    tier: medium
    rules:
      - {if: "amount > 1000", tier: high}
      - {if: "amount < 10", tier: low}
  draft_email: {tier: low, review: none, rules: [{if: "to.domain != example.com", tier: high}]}
  deploy: {tier: critical}
oncall:
  finance: {users: [U_ANA, U_BEN, U_CAI], shift: 1d}
"""


def policy_from(text: str = POLICY_YAML, source: str = "policy.yaml") -> Policy:
    return parse_policy(yaml.safe_load(text), source=source)


def propose_with(policy: Policy, tool: str, args: dict[str, Any], **kw: Any) -> tuple[Any, bool]:
    return propose(policy, request_id="r1", tool=tool, args=args, requester="U_AGENT", now=T0, **kw)


# -- the built-in default ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tier", "timeout", "exhausted"),
    [
        (RiskTier.LOW, 4 * HOUR, State.AUTO_APPROVED),
        (RiskTier.MEDIUM, 30 * MIN, State.AUTO_REJECTED),
        (RiskTier.HIGH, 15 * MIN, State.AUTO_REJECTED),
        (RiskTier.CRITICAL, 5 * MIN, State.AUTO_REJECTED),
    ],
)
def test_default_policy_matches_the_design_table(
    tier: RiskTier, timeout: int, exhausted: State
) -> None:
    tp = DEFAULT_POLICY.tiers[tier]
    assert tp.review_timeout == timeout
    assert tp.on_exhausted == exhausted
    assert tp.escalation, "every tier escalates somewhere before the default applies"
    levels = DEFAULT_POLICY.levels(tier, T0)
    assert levels[0].timeout_ms == timeout
    assert load_policy(None) is DEFAULT_POLICY


def test_default_policy_high_risk_has_a_backup_after_the_first_escalation() -> None:
    assert len(DEFAULT_POLICY.tiers[RiskTier.HIGH].escalation) >= 2


# -- classifying a call -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "tier"),
    [
        ({"amount": 5000}, RiskTier.HIGH),
        ({"amount": 1000}, RiskTier.MEDIUM),  # the rule says "> 1000"
        ({"amount": 5}, RiskTier.MEDIUM),  # a rule to low never lowers the tier
        ({}, RiskTier.HIGH),  # no such argument: fail closed, the rule's tier applies
        ({"amount": "lots"}, RiskTier.HIGH),  # a value of the wrong type cannot prove safety
    ],
)
def test_rules_raise_the_tier_and_never_lower_it(args: dict[str, Any], tier: RiskTier) -> None:
    verdict = policy_from().classify("refund", args)
    assert (verdict.tier, verdict.review) == (tier, True)


def test_unknown_tools_get_the_default_tier_and_a_review() -> None:
    verdict = policy_from().classify("rm_rf", {"path": "/"})
    assert (verdict.tier, verdict.review) == (RiskTier.MEDIUM, True)


def test_review_none_skips_review_unless_a_rule_raises_the_tier() -> None:
    policy = policy_from()
    inside = policy.classify("draft_email", {"to": {"domain": "example.com"}})
    assert (inside.tier, inside.review) == (RiskTier.LOW, False)
    outside = policy.classify("draft_email", {"to": {"domain": "evil.test"}})
    assert (outside.tier, outside.review) == (RiskTier.HIGH, True)


# -- refusing a bad file ----------------------------------------------------------------------


def _edit(mutate: Any) -> str:
    data = yaml.safe_load(POLICY_YAML)
    mutate(data)
    return yaml.safe_dump(data)


BAD = {
    "auto_approve_high": (
        lambda d: d["tiers"]["high"].update(on_exhausted="auto_approved"),
        "tiers.high.on_exhausted",
    ),
    "auto_approve_critical": (
        lambda d: d["tiers"]["critical"].update(on_exhausted="auto_approved"),
        "tiers.critical.on_exhausted",
    ),
    "empty_level": (
        lambda d: d["tiers"]["medium"]["escalation"].append({"timeout": "5m"}),
        "tiers.medium.escalation.2",
    ),
    "unknown_tier_key": (lambda d: d["tiers"].update(urgent=d["tiers"]["low"]), "tiers.urgent"),
    "unknown_tool_tier": (
        lambda d: d["tools"]["deploy"].update(tier="urgent"),
        "tools.deploy.tier",
    ),
    "undefined_oncall": (
        lambda d: d["tiers"]["high"]["reviewers"].update(oncall="nobody"),
        "tiers.high",
    ),
    "unknown_field": (lambda d: d["tiers"]["low"].update(reviewer="U_X"), "tiers.low.reviewer"),
    "unknown_top_field": (lambda d: d.update(tool={}), "tool"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_config_errors_name_the_file_the_field_and_the_fix(case: str, tmp_path: Path) -> None:
    mutate, field = BAD[case]
    path = tmp_path / "team-policy.yaml"
    path.write_text(_edit(mutate))
    with pytest.raises(ConfigError) as info:
        load_policy(path)
    text = str(info.value)
    assert str(path) in text
    assert f": {field}" in text
    assert "fix" in text


def test_an_unknown_tier_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="use one of low, medium, high, critical"):
        policy_from(_edit(lambda d: d.update(default_tier="urgent")))


def test_fix_hints_only_where_they_apply() -> None:
    with pytest.raises(ConfigError) as info:
        policy_from(_edit(lambda d: d["tiers"]["low"]["reviewers"].update(timeout="soon")))
    text = str(info.value)
    assert "tiers.low.reviewers.timeout" in text and "'30m'" in text
    assert "use one of low" not in text  # a bad duration is not a bad tier


def test_a_missing_tier_and_an_unreadable_rule_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"critical.*fix: define all four tiers"):
        policy_from(_edit(lambda d: d["tiers"].pop("critical")))
    with pytest.raises(ConfigError, match=r"tools\.refund\.rules\.0\.if: .*fix"):
        policy_from(_edit(lambda d: d["tools"]["refund"]["rules"][0].update({"if": "amount"})))


def test_load_policy_on_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_policy(path)
    assert str(path) in str(info.value) and "HITL_POLICY" in str(info.value)


@pytest.mark.parametrize("text", ["tiers: [unclosed", "tiers:\n\t- tab", "- just\n- a list\n", ""])
def test_load_policy_on_invalid_yaml(tmp_path: Path, text: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_policy(path)
    assert str(path) in str(info.value) and "fix" in str(info.value)


def test_load_policy_reads_a_good_file(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(POLICY_YAML)
    assert load_policy(str(path)) == policy_from()


# -- on-call rotations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("at", "who"),
    [
        (HANDOVER, "U_ANA"),
        (HANDOVER + DAY - 1, "U_ANA"),
        (HANDOVER + DAY, "U_BEN"),
        (HANDOVER + 2 * DAY, "U_CAI"),
        (HANDOVER + 3 * DAY, "U_ANA"),
        (HANDOVER - 1, "U_CAI"),  # before the start the turns run backwards
    ],
)
def test_oncall_rotation_resolves_by_time(at: int, who: str) -> None:
    assert policy_from().oncall["finance"].at(at) == who


def test_each_level_gets_who_is_on_call_when_that_level_starts() -> None:
    # Review takes 30m; Ana's shift ends 10 minutes after the request, so Ben gets level 1.
    levels = policy_from().levels(RiskTier.MEDIUM, HANDOVER + DAY - 10 * MIN)
    assert [lvl.users for lvl in levels] == [(), ("U_BEN",), ("U_LEAD",)]
    assert [lvl.timeout_ms for lvl in levels] == [30 * MIN, 10 * MIN, 30 * MIN]


# -- proposing a request ----------------------------------------------------------------------


def test_propose_copies_the_policy_into_the_request() -> None:
    old = policy_from()
    req, needs_review = propose_with(old, "refund", {"amount": 5000}, run_id="run-1")
    assert needs_review
    assert (req.state, req.risk, req.approvers) == (
        State.PENDING_REVIEW,
        RiskTier.HIGH,
        ("U_BOSS", "S_FIN"),
    )
    assert req.expires_at == T0 + 15 * MIN
    assert req.payload_hash == payload_hash("refund", {"amount": 5000})

    # The team edits the file: shorter timeout, anyone approves. The request does not care,
    # even after a round trip through storage.
    new = policy_from(POLICY_YAML.replace("15m", "1m").replace("[U_BOSS, S_FIN]", '["*"]'))
    assert new.tiers[RiskTier.HIGH].approvers == ("*",)
    stored = ActionRequest.model_validate_json(req.model_dump_json())
    assert stored == req
    assert stored.approvers == ("U_BOSS", "S_FIN") and stored.levels[0].timeout_ms == 15 * MIN
    later = apply(stored, Decision(event=Event.TIMEOUT), T0 + 15 * MIN).request
    assert later.state == State.AUTO_REJECTED  # this tier has no escalation in the old file


def test_caller_risk_may_raise_the_tier_but_not_lower_it() -> None:
    policy = policy_from()
    up, _ = propose_with(policy, "refund", {"amount": 50}, risk=RiskTier.CRITICAL)
    assert (up.risk, up.quorum, up.expires_at) == (RiskTier.CRITICAL, 2, T0 + 5 * MIN)
    down, _ = propose_with(policy, "refund", {"amount": 5000}, risk=RiskTier.LOW)
    assert down.risk == RiskTier.HIGH
    _, skip = propose_with(policy, "draft_email", {"to": {"domain": "example.com"}})
    _, raised = propose_with(
        policy, "draft_email", {"to": {"domain": "example.com"}}, risk=RiskTier.HIGH
    )
    assert (skip, raised) == (False, True)


def test_propose_refuses_arguments_that_cannot_be_shown() -> None:
    with pytest.raises(PayloadError):
        propose_with(DEFAULT_POLICY, "refund", {"amount": math.nan})


# -- the payload hash -------------------------------------------------------------------------


def test_payload_hash_ignores_key_order_at_every_depth() -> None:
    a = {"to": {"iban": "DE00", "name": "Ann"}, "amount": 5, "tags": ["x", "y"]}
    b = {"amount": 5, "tags": ["x", "y"], "to": {"name": "Ann", "iban": "DE00"}}
    assert payload_hash("pay", a) == payload_hash("pay", b)
    assert canonical_args(a) == canonical_args(b)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("pay", {"amount": 50, "to": "acct-1"}),  # another value
        ("pay", {"amount": "5", "to": "acct-1"}),  # another type
        ("pay", {"amount": 5.5, "to": "acct-1"}),
        ("pay", {"amount": 5, "to": "acct-1", "memo": ""}),  # one argument more
        ("pay", {"amount": 5}),  # one less
        ("pay", {"amount": 5, "to": "acct-2"}),
        ("pay", {"amount": 5, "To": "acct-1"}),
        ("payout", {"amount": 5, "to": "acct-1"}),  # another tool
        ("pay", {"amount": [5], "to": "acct-1"}),
    ],
)
def test_payload_hash_changes_with_any_argument(tool: str, args: dict[str, Any]) -> None:
    assert payload_hash(tool, args) != payload_hash("pay", {"amount": 5, "to": "acct-1"})


json_values = st.recursive(
    # integers JSON carries exactly: larger ones are refused (bot/core/args/plainjson.py)
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=6), st.randoms())
def test_payload_hash_is_stable_under_any_key_order(args: dict[str, Any], rnd: Any) -> None:
    keys = list(args)
    rnd.shuffle(keys)
    assert payload_hash("t", {k: args[k] for k in keys}) == payload_hash("t", args)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_canonical_args_refuses_nan_and_infinity(bad: float) -> None:
    with pytest.raises(PayloadError, match="not plain JSON"):
        canonical_args({"amount": bad})


def test_canonical_args_refuses_more_than_64_kib() -> None:
    overhead = len(canonical_args({"a": ""}))
    fits = {"a": "x" * (MAX_PAYLOAD_BYTES - overhead)}
    assert len(canonical_args(fits).encode()) == MAX_PAYLOAD_BYTES
    with pytest.raises(PayloadError, match="limit"):
        canonical_args({"a": "x" * (MAX_PAYLOAD_BYTES - overhead + 1)})
    with pytest.raises(PayloadError):  # counted in bytes, not characters
        canonical_args({"a": "é" * (MAX_PAYLOAD_BYTES // 2)})


@pytest.mark.parametrize(
    ("written", "ms"),
    [(90, 90_000), (0.5, 500), ("250ms", 250), ("90s", 90_000), ("30m", 1_800_000), (0.001, 1)],
)
def test_durations_may_be_seconds_or_text(written: object, ms: int) -> None:
    assert parse_duration(written) == ms


@pytest.mark.parametrize("written", [0, "0s", -5, True])
def test_a_duration_must_be_a_positive_time(written: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(written)


def test_the_canonical_payload_form_is_pinned() -> None:
    # Hashes are stored with requests and audit entries: a changed canonical form would
    # make every stored decision look as if it were made on another payload.
    args = {"to": "Zoë", "amount": 5, "note": {"b": [1, 2.5], "a": None}}
    assert canonical_args(args) == '{"amount":5,"note":{"a":null,"b":[1,2.5]},"to":"Zoë"}'
    assert payload_hash("refund", args) == (
        "464d8a520134d8cfc6847ae063f717c03dccf7bfccd2f19028a18c146b59defc"
    )
    assert payload_hash("réfund", {}) == (
        "e3cc6b17b3b653e0dfc0475a111919765596a7d20c910251e3fa2497d91fd610"
    )


# -- failing closed ----------------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["amount >> 1000", "amount > ", "> 1000", "amount ~ 3"])
def test_an_unreadable_rule_is_one_short_error_naming_file_tool_rule_and_fix(rule: str) -> None:
    text = POLICY_YAML.replace('"amount > 1000"', f'"{rule}"')
    with pytest.raises(ConfigError) as err:
        policy_from(text)
    message = str(err.value)
    assert message.startswith("policy.yaml: tools.refund.rules.0")
    assert "cannot read the rule" in message and "fix:" in message
    assert len(message.splitlines()) == 1 and "Traceback" not in message


def test_a_rule_whose_argument_is_missing_raises_the_call_to_the_rules_tier() -> None:
    # "amout" is a typo: no call has it, so every refund is raised, never left lower.
    policy = policy_from(POLICY_YAML.replace('"amount > 1000"', '"amout > 1000"'))
    assert policy.classify("refund", {"amount": 5}).tier == RiskTier.HIGH
    assert policy.classify("refund", {"amount": True}).tier == RiskTier.HIGH


def test_a_rule_naming_an_argument_the_tools_schema_lacks_is_refused() -> None:
    policy = policy_from(POLICY_YAML.replace('"amount > 1000"', '"amout > 1000"'))
    schema = {"type": "object", "properties": {"amount": {"type": "number"}}}
    with pytest.raises(ConfigError, match=r"tools\.refund\.rules\.0: .*'amout'.*its arguments: "):
        policy.check_schema("refund", schema)
    policy_from().check_schema("refund", schema)  # the right name passes


@pytest.mark.parametrize("tier", ["high", "critical"])
def test_high_and_critical_tiers_must_name_their_approvers(tier: str) -> None:
    data = yaml.safe_load(POLICY_YAML)
    data["tiers"][tier].pop("approvers", None)
    with pytest.raises(ConfigError, match=rf"tiers\.{tier}\.approvers: .*must name who may"):
        parse_policy(data)


def test_no_approvers_means_the_reviewer_channels_never_the_workspace() -> None:
    req, _ = propose_with(policy_from(), "refund", {"amount": 50})
    assert req.approvers == ("#ops",) and "*" not in req.eligible()


@pytest.mark.parametrize("name", ["@alice", "alice", "everyone", "U 1"])
def test_an_approver_that_is_not_a_principal_is_refused(name: str) -> None:
    data = yaml.safe_load(POLICY_YAML)
    data["tiers"]["high"]["approvers"] = [name]
    with pytest.raises(ConfigError, match="is not a principal; fix"):
        parse_policy(data)


def test_field_and_cross_field_problems_are_named_together() -> None:
    """pydantic skips the policy's own check when a field is wrong: the cross-field
    problems are still named in the same error, so one run of `policy check` shows all."""
    data = yaml.safe_load(POLICY_YAML)
    data["tiers"]["low"]["review_timeout"] = "soon"  # a field problem
    data["tiers"]["medium"]["on_exhausted"] = "auto_approved"  # cross-field problems
    data["tiers"]["high"].pop("approvers")
    data["tiers"]["critical"]["reviewers"] = {"oncall": "nobody"}
    with pytest.raises(ConfigError) as info:
        parse_policy(data, source="p.yaml")
    lines = str(info.value).splitlines()
    assert [line.split(":")[1].strip() for line in lines] == [
        "tiers.low.review_timeout",
        "tiers.medium.on_exhausted",
        "tiers.high.approvers",
        "tiers.critical",
    ], lines
    assert "oncall rotation 'nobody' is not defined" in lines[-1]


_LEVEL = ("users", "channels", "oncall", "timeout")
_TIER = ("review_timeout", "reviewers", "escalation", "approvers", "on_exhausted")
_leaf = st.none() | st.integers() | st.sampled_from(["auto_approved", "5m", "#ops", "x"])
_shape = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_LEVEL), inner, max_size=3)
    ),
    max_leaves=8,
)
_tiers = st.dictionaries(
    st.sampled_from(["low", "medium", "high", "critical", "huge"]),
    st.dictionaries(st.sampled_from(_TIER), _shape, max_size=5) | _leaf,
    max_size=5,
)


@given(_tiers, st.dictionaries(st.sampled_from(["oncall", "tools"]), _shape, max_size=2))
def test_any_shape_of_file_is_refused_in_words_never_with_a_traceback(
    tiers: dict[str, Any], rest: dict[str, Any]
) -> None:
    """Whatever stands where a field should be, a wrong file is refused as a ConfigError
    naming its problems (serve and `policy check` print it), never another exception."""
    with contextlib.suppress(ConfigError):
        parse_policy({"tiers": tiers, **rest})
