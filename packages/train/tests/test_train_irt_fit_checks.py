"""One check of a stored IRT fit (issue 41, items 1-3), shared by every file that carries one: the `irt`
checkpoint and the IRT inputs of a local or any-pool router. Damaged numbers (NaN, infinity, a temperature
of 0 or below, a negative cost), arrays of the wrong shape, a fit without a pool model's run and a
calibration naming other models are each one line naming the file and the field, exit 2, from `route` and
`evaluate --checkpoint` alike; never a traceback, never a route."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from router_oracle.infra.validation_message import one_line
from router_train.anypool.irt_inputs import AnyPoolIrtState
from router_train.cli import main
from router_train.irt.checkpoint import IrtCheckpointError, read_irt
from router_train.local.irt_features import IrtFeatureState

Damage = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Damage:
    """Set the field at dotted `path` (list indices as numbers) of the checkpoint document."""

    def damage(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return damage


def _shorten(path: str) -> Damage:
    def damage(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[part]
        node[last] = node[last][:-1]

    return damage


def _drop_run(doc: dict[str, Any]) -> None:
    run = doc["pool"]["models"][0]["runs"][0]
    j = doc["fit"]["run_ids"].index(run)
    for field in ("run_ids", "theta", "c", "run_costs"):
        del doc["fit"][field][j]


def _rename_calibration_model(doc: dict[str, Any]) -> None:
    doc["calibration"]["model_ids"][0] = "no-such-model"


def _two_of_three(doc: dict[str, Any]) -> None:
    doc["calibration"]["model_ids"] = doc["calibration"]["model_ids"][:2]
    doc["calibration"]["model_costs"] = doc["calibration"]["model_costs"][:2]
    doc["calibration"]["model_resolved"] = doc["calibration"]["model_resolved"][:2]  # every per-model list


def _change_k(doc: dict[str, Any]) -> None:
    doc["fit"]["k"] += 1


def _empty_vocabulary(doc: dict[str, Any]) -> None:
    doc["fit"]["vocabulary"] = []
    doc["fit"]["idf"] = []


# (name, damage, what the one line must name)
CASES: list[tuple[str, Damage, str]] = [
    ("nan-theta", _set("fit.theta.0.0", math.nan), "fit.theta[0][0]"),
    ("nan-w", _set("fit.w.0.0", math.nan), "fit.w[0][0]"),
    ("nan-tolerance", _set("fit.tolerance", math.nan), "fit.tolerance"),
    ("inf-c", _set("fit.c.0", math.inf), "fit.c[0]"),
    ("zero-temperature", _set("fit.temperature", 0.0), "fit.temperature"),
    ("negative-temperature", _set("fit.temperature", -1.0), "fit.temperature"),
    ("negative-calibration-cost", _set("calibration.model_costs.0", -0.5), "calibration.model_costs[0]"),
    ("negative-run-cost", _set("fit.run_costs.0", -0.5), "fit.run_costs[0]"),
    ("calibration-two-of-three", _two_of_three, "calibration.model_ids"),
    ("calibration-unknown-model", _rename_calibration_model, "calibration.model_ids"),
    ("run-missing", _drop_run, "fit.run_ids has no run"),
    ("k-changed", _change_k, "fit: theta must be"),
    ("theta-short", _shorten("fit.theta"), "fit: theta must be"),
    ("x-mean-short", _shorten("fit.x_mean"), "fit: x_mean must be"),
    ("idf-short", _shorten("fit.idf"), "fit: idf must be"),
    ("empty-vocabulary", _empty_vocabulary, "fit: x_mean must be"),
]


@pytest.fixture(scope="module")
def checkpoint(irt_checkpoint: Path) -> Path:
    return irt_checkpoint  # fitted once per test process (train_fixtures)


@pytest.fixture(scope="module")
def document(checkpoint: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(checkpoint.read_text())
    return doc


def _damaged(document: dict[str, Any], damage: Damage, path: Path) -> Path:
    doc = copy.deepcopy(document)
    damage(doc)
    path.write_text(json.dumps(doc))  # json writes NaN and Infinity as the literals pydantic reads
    return path


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_the_undamaged_checkpoint_reads(checkpoint: Path) -> None:
    read_irt(checkpoint)


@pytest.mark.parametrize(("name", "damage", "field"), CASES, ids=[c[0] for c in CASES])
def test_damaged_irt_checkpoint_is_one_line_naming_file_and_field(
    document: dict[str, Any],
    name: str,
    damage: Damage,
    field: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = _damaged(document, damage, tmp_path / f"{name}.json")
    with pytest.raises(IrtCheckpointError, match=f"^{bad}: ") as info:
        read_irt(bad)
    assert field in str(info.value)
    out = tmp_path / "routes.jsonl"
    err = _one_line(
        capsys,
        [
            "route",
            "--quiet",
            "--checkpoint",
            str(bad),
            "--instance",
            "astropy__astropy-12907",
            "-o",
            str(out),
        ],
    )
    assert str(bad) in err and field in err
    assert not out.exists()
    report = tmp_path / "report"
    err = _one_line(capsys, ["evaluate", "--checkpoint", str(bad), "--no-baselines", "-o", str(report)])
    assert str(bad) in err and field in err
    assert not report.exists()


def _carriers(document: dict[str, Any]) -> list[tuple[type[Any], dict[str, Any]]]:
    """The IRT inputs of a local and of an any-pool router, built around the checkpoint's fit and pool."""
    k = len(document["pool"]["models"])
    local = {
        "fit": document["fit"],
        "pool": document["pool"],
        "train_logits": {"t1": [0.0] * k},
        "mean": [0.0] * k,
        "scale": [1.0] * k,
    }
    anypool = {
        "fit": document["fit"],
        "pool": document["pool"],
        "train_probabilities": {"t1": [0.5] * k},
        "logit_mean": 0.0,
        "logit_scale": 1.0,
    }
    return [(IrtFeatureState, local), (AnyPoolIrtState, anypool)]


FIT_CASES = [c for c in CASES if not c[2].startswith("calibration")]


@pytest.mark.parametrize(("name", "damage", "field"), FIT_CASES, ids=[c[0] for c in FIT_CASES])
def test_every_carrier_of_an_irt_fit_refuses_the_same_damage(
    document: dict[str, Any], name: str, damage: Damage, field: str
) -> None:
    for model, state in _carriers(document):
        model.model_validate(state)  # undamaged: reads
        doc = {"fit": copy.deepcopy(document["fit"]), "pool": copy.deepcopy(document["pool"])}
        damage(doc)
        with pytest.raises(ValidationError) as info:
            model.model_validate_json(json.dumps({**state, **doc}))
        assert field in one_line(info.value), model


def test_carriers_refuse_their_own_damaged_numbers(document: dict[str, Any]) -> None:
    (local_model, local), (anypool_model, anypool) = _carriers(document)
    for bad in ({"scale": [0.0] * len(local["scale"])}, {"mean": [math.nan] * len(local["mean"])}):
        with pytest.raises(ValidationError):
            local_model.model_validate_json(json.dumps({**local, **bad}))
    with pytest.raises(ValidationError, match="one number per pool model"):
        local_model.model_validate({**local, "train_logits": {"t1": [0.0]}})
    damaged: list[dict[str, Any]] = [
        {"logit_scale": -1.0},
        {"train_probabilities": {"t1": [1.5] * 3}},
        {"logit_mean": math.inf},
    ]
    for worse in damaged:
        with pytest.raises(ValidationError):
            anypool_model.model_validate_json(json.dumps({**anypool, **worse}))
