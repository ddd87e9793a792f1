"""HITL_SIGNING_KEY_FILE: serve's key read from a file a Docker or Kubernetes secret
mounts (deploy/docker-compose.yml), as `hitl-bot keys show` reads it where serve runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.signing import Signer
from tests.cli.test_cli import cli as run_cli
from tests.support.keys import SERVE_SEED, serve_signer

# HITL_SIGNING_KEY is set for every test process (tests/conftest.py); empty means unset.
NO_KEY_ENV = {"HITL_SIGNING_KEY": "", "HITL_SIGNING_PUBLIC_KEY": ""}


async def cli(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    # rich wraps an error at the terminal's width, a long path mid-word
    return await run_cli(*args, env=env | {"COLUMNS": "1000"})


def _secret(tmp_path: Path, mode: int, text: str = SERVE_SEED + "\n") -> Path:
    path = tmp_path / "signing.key"
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o600, 0o440])  # 0440: a Kubernetes secret with fsGroup
async def test_keys_show_prints_the_key_in_the_secret_file(tmp_path: Path, mode: int) -> None:
    secret = _secret(tmp_path, mode)
    code, out, err = await cli(
        "keys",
        "show",
        env=NO_KEY_ENV
        | {"HITL_SIGNING_KEY_FILE": str(secret), "HITL_DATA_DIR": str(tmp_path / "data")},
    )
    assert code == 0, err
    signer = serve_signer()
    assert out.split() == [signer.key_id, "ed25519", signer.public_b64()]
    assert not (tmp_path / "data" / "signing.key").exists()  # no second key made


async def test_a_secret_file_every_user_may_read_is_refused(tmp_path: Path) -> None:
    secret = _secret(tmp_path, 0o644)
    code, out, err = await cli(
        "keys", "show", env=NO_KEY_ENV | {"HITL_SIGNING_KEY_FILE": str(secret)}
    )
    assert code == 2 and not out
    assert "can be read by every user (mode 644)" in err and "chmod 600" in err


async def test_a_missing_or_damaged_secret_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.key"
    code, _, err = await cli(
        "keys", "show", env=NO_KEY_ENV | {"HITL_SIGNING_KEY_FILE": str(missing)}
    )
    assert code == 2 and "cannot be read" in err and "nowhere.key" in err
    damaged = _secret(tmp_path, 0o600, "not a key\n")
    code, _, err = await cli(
        "keys", "show", env=NO_KEY_ENV | {"HITL_SIGNING_KEY_FILE": str(damaged)}
    )
    assert code == 2 and "does not hold an Ed25519 key" in err


async def test_the_key_and_its_file_both_set_are_refused(tmp_path: Path) -> None:
    secret = _secret(tmp_path, 0o600)
    code, _, err = await cli(
        "keys",
        "show",
        env={"HITL_SIGNING_KEY": SERVE_SEED, "HITL_SIGNING_KEY_FILE": str(secret)},
    )
    assert code == 2 and "both HITL_SIGNING_KEY and HITL_SIGNING_KEY_FILE are set" in err


async def test_rotating_a_secret_file_key_prints_the_new_secret_and_writes_nothing(
    tmp_path: Path,
) -> None:
    secret = _secret(tmp_path, 0o600)
    data = tmp_path / "data"
    code, out, err = await run_cli(
        "keys",
        "rotate",
        env=NO_KEY_ENV | {"HITL_SIGNING_KEY_FILE": str(secret), "HITL_DATA_DIR": str(data)},
    )
    assert code == 0, err
    assert secret.read_text() == SERVE_SEED + "\n" and not data.exists()  # the operator's
    said = dict(line.split("=", 1) for line in out.splitlines() if line.startswith("HITL_"))
    new = Signer.from_seed(said["HITL_SIGNING_KEY"])
    old = serve_signer().public_b64()
    assert said["HITL_SIGNING_PUBLIC_KEY"] == f"{new.public_b64()},{old}"
