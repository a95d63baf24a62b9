"""The main job (`./pants run packages/train:smoke`) without Prime: it must say so and train locally."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from installed_prime import no_installed_prime  # noqa: F401  (autouse: tests see only their fake prime)

from router_train import smoke


def _path_with(tmp_path: Path, prime_script: str | None) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if prime_script is not None:
        prime = bin_dir / "prime"
        prime.write_text(prime_script)
        prime.chmod(prime.stat().st_mode | stat.S_IEXEC)
    return str(bin_dir)


@pytest.mark.e2e
def test_smoke_without_prime_trains_locally(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", _path_with(tmp_path, None))
    out = tmp_path / "run"
    assert smoke.main(["--output-dir", str(out), "--steps", "3"]) == 0
    printed = capsys.readouterr().out
    assert "NOT launching on Prime" in printed and "`prime` is not on PATH" in printed
    assert "matches the environment's bundled table byte for byte" in printed
    assert "held-out tasks: 100" in printed
    # ...and says where the router stands under cross-validation, and how to see all fold seeds.
    assert "5-fold cross-validation" in printed and "local-grpo vs the best random mix" in printed
    assert "evaluate --folds 5" in printed
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3]
    assert (out / "checkpoint.json").is_file()


def test_smoke_with_prime_logged_in_launches_from_dist(tmp_path, monkeypatch, capsys):
    # A logged-in prime but no built wheels: the launch stops before any push and says what to build.
    log = tmp_path / "prime-calls.log"
    script = f'#!/bin/sh\necho "$@" >> {log}\nif [ "$1" = config ]; then echo "API Key   | sk-***abcd"; fi\n'
    monkeypatch.setenv("PATH", _path_with(tmp_path, script) + os.pathsep + "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    code = smoke.main(["--output-dir", str(tmp_path / "run")])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "launch on Prime Hosted Training" in captured.out
    assert "./pants package" in captured.err
    calls = log.read_text().splitlines()
    assert not any(c.startswith(("env push", "train")) for c in calls), calls
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("steps", ["0", "-1"])
def test_smoke_rejects_bad_steps(tmp_path, monkeypatch, capsys, steps):
    monkeypatch.setenv("PATH", _path_with(tmp_path, None))
    with pytest.raises(SystemExit) as exc:
        smoke.main(["--output-dir", str(tmp_path / "run"), "--steps", steps])
    assert exc.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
