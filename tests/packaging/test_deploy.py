"""deploy/: the compose file as `docker-compose config` reads it, the Kubernetes manifests
against the Kubernetes schemas, and the policy and channels the setup page names.

Both checks run offline. Locally a missing docker-compose (Debian's package, 1.29) or
kubernetes-validate (the test extra) skips them with the reason; under CI (CI=true) it
fails them: .ci/run installs both.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.policy import DEFAULT_POLICY, Policy, parse_policy
from tests.support.docpages import page

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
MANIFESTS = DEPLOY / "kubernetes"
# The oldest Kubernetes the manifests are checked for, and the newest the installed
# kubernetes-validate knows (1.37 with the test extra's newest).
OLDEST_K8S = "1.33.0"
INTERNAL_REDIS = "redis://valkey:6379/0"


def _need(present: bool, what: str, install: str) -> None:
    if present:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} is missing, and CI=true: deploy/ may not go unchecked ({install})")
    pytest.skip(f"{what} is missing ({install})")


def _compose(tmp_path: Path, env: str = "") -> dict[str, Any]:
    """`docker-compose config` on a copy of deploy/ filled in as docs/production.md says."""
    exe = shutil.which("docker-compose")
    _need(exe is not None, "docker-compose", "apt-get install -y docker-compose")
    assert exe is not None
    copy = tmp_path / "deploy"
    shutil.copytree(DEPLOY, copy, ignore=shutil.ignore_patterns(".env", "secrets"))
    (copy / ".env").write_text((DEPLOY / ".env.example").read_text() + env)
    (copy / "secrets").mkdir()
    (copy / "secrets" / "signing.key").write_text("a seed\n")
    done = subprocess.run(
        [exe, "--project-directory", str(copy), "-f", str(copy / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "REDIS_URL"},  # the tests' own
    )
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    return config


def test_compose_runs_serve_and_workers_on_a_valkey_with_an_append_only_file(
    tmp_path: Path,
) -> None:
    services = _compose(tmp_path)["services"]
    assert set(services) == {"serve", "worker", "valkey"}
    serve, worker, valkey = services["serve"], services["worker"], services["valkey"]
    assert serve["command"] == ["hitl-bot", "serve"]
    assert worker["command"][:2] == ["hitl-bot", "worker"]
    command = valkey["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--maxmemory-policy") + 1] == "noeviction"
    assert "/data" in " ".join(valkey["volumes"])  # the append-only file outlives the box
    for bot in (serve, worker):
        assert bot["environment"]["REDIS_URL"] == INTERNAL_REDIS
        assert bot["depends_on"]["valkey"]["condition"] == "service_healthy"
        assert bot["environment"]["HITL_POLICY"] == "/etc/hitl-bot/policy.yaml"
        assert any(v.endswith("policy.yaml:/etc/hitl-bot/policy.yaml:ro") for v in bot["volumes"])
    assert "valkey-cli ping" in " ".join(valkey["healthcheck"]["test"])
    assert "/healthz" in " ".join(serve["healthcheck"]["test"])
    # The image's HEALTHCHECK asks /healthz, which a worker does not serve.
    assert worker["healthcheck"] in ({"disable": True}, {"test": ["NONE"]})


def test_compose_gives_the_signing_key_to_serve_alone_as_a_secret(tmp_path: Path) -> None:
    config = _compose(tmp_path)
    serve, worker = config["services"]["serve"], config["services"]["worker"]
    assert config["secrets"]["hitl_signing_key"]["file"].endswith("secrets/signing.key")
    assert [s["source"] for s in serve["secrets"]] == ["hitl_signing_key"]
    assert serve["environment"]["HITL_SIGNING_KEY_FILE"] == "/run/secrets/hitl_signing_key"
    assert "secrets" not in worker
    assert not {"HITL_SIGNING_KEY", "HITL_SIGNING_KEY_FILE"} & set(worker["environment"])
    assert "HITL_SIGNING_PUBLIC_KEY" in worker["environment"]  # from .env


def test_compose_takes_your_own_redis_from_the_env_file(tmp_path: Path) -> None:
    mine = "rediss://:pw@redis.example.com:6380/0"
    services = _compose(tmp_path, env=f"REDIS_URL={mine}\n")["services"]
    assert services["serve"]["environment"]["REDIS_URL"] == mine
    assert services["worker"]["environment"]["REDIS_URL"] == mine


def _documents() -> dict[str, list[dict[str, Any]]]:
    return {
        path.name: [d for d in yaml.safe_load_all(path.read_text()) if d]
        for path in sorted(MANIFESTS.glob("*.yaml"))
    }


def _kind(kind: str, name: str) -> dict[str, Any]:
    found = [
        d
        for docs in _documents().values()
        for d in docs
        if d["kind"] == kind and d["metadata"]["name"] == name
    ]
    assert len(found) == 1, f"one {kind} {name}"
    return found[0]


def test_the_manifests_validate_against_the_kubernetes_schemas() -> None:
    present = importlib.util.find_spec("kubernetes_validate") is not None
    _need(present, "kubernetes-validate", "pip install -e '.[test]'")
    from kubernetes_validate import utils

    checked = []
    for name, docs in _documents().items():
        for doc in docs:
            if doc["kind"] == "ServiceMonitor":  # a CRD: no schema; checked below
                continue
            for version in dict.fromkeys((OLDEST_K8S, utils.latest_version())):
                try:
                    utils.validate(doc, version, strict=True)
                except utils.ValidationError as exc:
                    pytest.fail(f"deploy/kubernetes/{name}: {doc['kind']} ({version}): {exc}")
            checked.append(f"{doc['kind']}/{doc['metadata']['name']}")
    assert set(checked) >= {
        "Deployment/hitl-bot-serve",
        "Deployment/hitl-bot-worker",
        "StatefulSet/valkey",
        "Service/hitl-bot",
        "Service/valkey",
        "ConfigMap/hitl-bot-defaults",
    }


def _pod(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = _kind("Deployment", name)["spec"]["template"]["spec"]
    return spec


def test_serve_is_probed_on_healthz_and_holds_the_key_the_worker_never_sees() -> None:
    serve, worker = _pod("hitl-bot-serve"), _pod("hitl-bot-worker")
    (container,) = serve["containers"]
    assert container["args"] == ["hitl-bot", "serve"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    key = next(v for v in serve["volumes"] if v["name"] == "signing")["secret"]
    assert key["secretName"] == "hitl-bot-signing"
    # Readable by the bot's group (fsGroup), by no other user: what the bot demands.
    assert key["defaultMode"] & 0o007 == 0 and serve["securityContext"]["fsGroup"] == 10001
    assert {"name": "HITL_SIGNING_KEY_FILE", "value": "/run/secrets/hitl/signing.key"} in (
        container["env"]
    )
    (wc,) = worker["containers"]
    assert wc["args"][:2] == ["hitl-bot", "worker"]
    assert not any("secret" in v for v in worker["volumes"])
    assert "HITL_SIGNING_KEY_FILE" not in str(wc.get("env", []))


def test_valkey_keeps_an_append_only_file_on_a_volume() -> None:
    valkey = _kind("StatefulSet", "valkey")["spec"]
    args = valkey["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert valkey["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    defaults = _kind("ConfigMap", "hitl-bot-defaults")["data"]
    assert defaults["REDIS_URL"] == INTERNAL_REDIS


def test_the_kustomization_applies_every_manifest_but_the_service_monitor() -> None:
    kust = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    listed = {Path(r).name for r in kust["resources"]}
    assert listed == set(_documents()) - {"servicemonitor.yaml"}
    assert all((DEPLOY / r).is_file() for r in kust["resources"])
    generated = {g["name"]: g for g in kust["secretGenerator"] + kust["configMapGenerator"]}
    assert generated["hitl-bot"]["envs"] == [".env"]  # the same file docker-compose reads
    assert generated["hitl-bot-signing"]["files"] == ["signing.key=secrets/signing.key"]
    assert generated["hitl-bot-policy"]["files"] == ["policy.yaml"]


def test_the_service_monitor_scrapes_serves_metrics_port() -> None:
    monitor = _kind("ServiceMonitor", "hitl-bot")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    service = _kind("Service", "hitl-bot")
    labels = service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}


def _channels(policy: Policy) -> set[str]:
    found = set()
    for tier in policy.tiers.values():
        for level in (tier.reviewers, *tier.escalation):
            found |= set(level.channels)
        found |= {a for a in tier.approvers if a.startswith("#")}
    return found


def test_the_shipped_policy_is_the_built_in_one_and_the_setup_page_names_its_channels() -> None:
    shipped = parse_policy(yaml.safe_load((DEPLOY / "policy.yaml").read_text()))
    assert shipped == DEFAULT_POLICY
    channels = _channels(DEFAULT_POLICY)
    assert "#hitl-pager" in channels
    # The channels a team creates, as docs/production.md lists them in its table.
    text = page("production.md")
    listed = set(re.findall(r"^\| `(#[\w-]+)` \|", text, re.MULTILINE))
    assert listed == channels, f"docs/production.md lists {sorted(listed)}"
