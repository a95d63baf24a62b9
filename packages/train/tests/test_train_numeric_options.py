"""Every numeric option of both CLIs is bounded and finite, checked before any work, named in the error.

Absurd numbers used to reach the trainer: `--steps 99999999999999999999999` overflowed, `--lr inf` or
`1e300` trained to NaN, `--seed -1` failed without naming `--seed`, and `evaluate --local 'X=--lr nan'`
printed pydantic's raw multi-line error. Now one validator (`router_oracle.infra.numeric_option`) parses each
flag against its config field's bounds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from router_oracle import cli as oracle_cli
from router_train import cli

BAD = [
    (["local", "--steps", "99999999999999999999999"], "argument --steps: ", "less than or equal to 1000000"),
    (["local", "--lr", "inf"], "argument --lr: ", "finite number"),
    (["local", "--lr", "1e300"], "argument --lr: ", "less than or equal to 1"),
    (["local", "--lr", "nan"], "argument --lr: ", "finite number"),
    (["local", "--seed", "-1"], "argument --seed: ", "greater than or equal to 0"),
    (["local", "--weight-decay", "inf"], "argument --weight-decay: ", "finite number"),
    (["local", "--eval-fraction", "nan"], "argument --eval-fraction: ", "finite number"),
    (["local", "--split-seed", "99999999999999"], "argument --split-seed: ", "less than or equal to"),
    (["local", "--reward-weights", "1e308,1e308,0,0,0"], "router-train local: --reward-weights: ", "within"),
    (["local-anypool", "--pool-seed", "-3"], "argument --pool-seed: ", "greater than or equal to 0"),
    (["local-anypool", "--steps", "1e30"], "argument --steps: ", "valid integer"),
    (["evaluate", "--folds", "0", "-o", "OUT"], "argument --folds: ", "greater than or equal to 1"),
    (["evaluate", "--local", "bad=--lr nan", "-o", "OUT"], "argument --lr: ", "finite number"),
    (["evaluate", "--jobs", "-2", "-o", "OUT"], "argument --jobs: ", "greater than or equal to 1"),
    (["evaluate-anypool", "--pool-seed", "-1", "-o", "OUT"], "argument --pool-seed: ", "greater than"),
    (["route", "--timeout", "inf"], "argument --timeout: ", "finite number"),
    (["route", "--budget", "nan"], "argument --budget: ", "finite number"),
    (["route", "--dial", "1e300"], "argument --dial: ", "less than or equal to 1000000"),
    (["fit", "--seed", "1e400", "-o", "OUT"], "argument --seed: ", "valid integer"),
    (["serve", "cfg.toml", "--port", "70000"], "argument --port: ", "less than or equal to 65535"),
]


@pytest.mark.parametrize(("argv", "flag", "problem"), BAD, ids=[" ".join(a[0][:3]) for a in BAD])
def test_absurd_number_is_one_line_naming_the_flag(
    argv: list[str],
    flag: str,
    problem: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    try:  # argparse exits 2 itself; an option inside `--local NAME=OPTIONS` returns 2 via the runner
        code: object = cli.main([a.replace("OUT", str(tmp_path / "out")) for a in argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith(" ") and "usage:" not in line]
    assert code == 2, err
    assert len(lines) == 1 and flag in lines[0] and problem in lines[0], err
    assert "https://" not in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # checked before any work: nothing was written


def _numeric_actions(parser: argparse.ArgumentParser, path: str) -> list[str]:
    """`PATH FLAG` of every option parsed with a bare int or float (not bounded) in `parser`'s tree."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _numeric_actions(sub, f"{path} {name}")
        elif action.type in (int, float):
            found.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return found


def test_no_numeric_option_is_unbounded() -> None:
    assert _numeric_actions(cli.build_parser(), "router-train") == []
    assert _numeric_actions(oracle_cli._parser(), "router-oracle") == []


def test_help_states_the_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["local", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Adam learning rate, in (0, 1]" in out
    assert "GRPO steps (policy updates), 1 to 1,000,000" in out
