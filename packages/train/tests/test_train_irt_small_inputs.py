"""Issue 41, items 4 and 10: too few tasks for the IRT fit's inner cross-validation is one line naming the
table and the user's numbers (flags), before any fitting, from `fit irt`, `evaluate --irt`, `local --irt`
and `local-anypool --irt`; `local --irt` refuses a table whose pool run the results matrix lacks, as
`fit irt` does; `--dial -1e6` parses; `fit --help` names `irt`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router_frontier_rl.bundled import bundled_table_path
from router_train.cli import build_parser, main


def _table(path: Path, n: int, *, rename_run: str | None = None) -> Path:
    """The bundled table's first `n` tasks; with `rename_run`, its first pool model's first run renamed
    so everywhere (a valid table whose run the results matrix lacks)."""
    doc = json.loads(bundled_table_path().read_text())
    doc["tasks"] = doc["tasks"][:n]
    text = json.dumps(doc)
    if rename_run is not None:
        text = text.replace(json.dumps(doc["pool"]["models"][0]["runs"][0]), json.dumps(rename_run))
    path.write_text(text)
    return path


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_too_few_tasks_for_the_inner_cross_validation_names_the_table_and_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = _table(tmp_path / "one.json", 1)
    five = _table(tmp_path / "five.json", 5)
    out = str(tmp_path / "out")
    err = _refused(capsys, ["fit", "irt", "--table", str(one), "--output-dir", out])
    assert f"{one} (1 tasks, --split all): the IRT fit would get 1 train task(s)" in err
    assert "needs at least 5" in err and "got 5 folds" not in err
    err = _refused(
        capsys, ["fit", "irt", "--split", "train", "--eval-fraction", "0.995", "--output-dir", out]
    )
    assert "(500 tasks, --split train, --eval-fraction 0.995): the IRT fit would get" in err
    err = _refused(
        capsys, ["evaluate", "--irt", "--folds", "2", "--no-baselines", "--table", str(five), "-o", out]
    )
    assert f"{five} (5 tasks, --irt with --folds 2): the IRT fit would get 2 train task(s)" in err
    err = _refused(capsys, ["local", "--irt", "--quiet", "--table", str(five), "--output-dir", out])
    assert f"{five} (5 tasks, --eval-fraction 0.2): the IRT fit would get 4 train task(s)" in err
    err = _refused(capsys, ["local-anypool", "--irt", "--quiet", "--table", str(five), "--output-dir", out])
    assert f"{five} (5 tasks, --eval-fraction 0.2): the IRT fit would get 4 train task(s)" in err
    assert not Path(out).exists()


def test_local_irt_refuses_a_pool_run_the_results_matrix_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _table(tmp_path / "extra-run.json", 40, rename_run="20990101_no-such-run")
    out = str(tmp_path / "out")
    lacks = "no bundled candidates table (bundled, openhands) holds all its runs (20990101_no-such-run, "
    err = _refused(capsys, ["fit", "irt", "--table", str(table), "--output-dir", out])
    assert lacks in err
    err = _refused(capsys, ["local", "--irt", "--quiet", "--table", str(table), "--output-dir", out])
    assert lacks in err
    assert not Path(out).exists()


def test_a_negative_dial_in_scientific_notation_is_a_value() -> None:
    parser = build_parser("route")
    for text, value in (("-1e6", -1e6), ("-2.5E-3", -2.5e-3), ("-.5", -0.5), ("-3", -3.0)):
        args = parser.parse_args(["route", "--checkpoint", "c.json", "--dial", text, "--instance", "x"])
        assert args.dial == value


def test_fit_help_names_irt(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "or `irt`, the IRT router" in text
