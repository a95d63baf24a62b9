"""Which pool run a harness report or a trajectory directory holds: what `--run` says, what the file says.

What the files say:
- a SWE-bench harness report is named `<model>.<run_id>.json` (`swebench.harness.reporting`;
  `<model>` is the predictions' `model_name_or_path` with `/` written `__`). A report whose name ends
  in `.<run>.json` for a run of the pool says it is that run, of that model (the longest such run
  wins: ids may contain dots). Any other name says nothing;
- mini-SWE-agent trajectories record their model (`info.config.model.model_name`), the same string
  the harness report's name carries, since both come from one run's predictions. So a trajectory
  directory says which run it is through the harness report of the same model (when exactly one
  report of the build names that model).

The rules: when the file says a run and `--run` names another, the build is refused (a mislabelled
run would silently swap two models' results); when `--run` is omitted, the run the file says is
used; when neither says, the build is refused asking for `--run`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from router_oracle.infra.errors import OracleInputError

HARNESS_SEP = "__"
"""How the harness writes the `/` of a model name into a report's file name."""


@dataclass(frozen=True, slots=True)
class ReportLabel:
    """What a harness report's file name says."""

    path: str
    """The report, as given."""
    model: str | None
    """The model name (`/` restored), or None when the name carries none."""
    run: str
    """The pool run the name ends in."""


def report_label(path: str | os.PathLike[str], runs: Collection[str]) -> ReportLabel | None:
    """The run (and model) a report's file name `<model>.<run_id>.json` says, for a run in `runs`."""
    name = Path(path).name
    if not name.endswith(".json"):
        return None
    stem = name[: -len(".json")]
    said = [r for r in runs if stem == r or stem.endswith(f".{r}")]
    if not said:
        return None
    run = max(said, key=len)
    model = stem[: -len(run) - 1] if len(stem) > len(run) else ""
    return ReportLabel(str(path), model.replace(HARNESS_SEP, "/") or None, run)


def _runs_hint(runs: Collection[str]) -> str:
    return ", ".join(sorted(runs))


def report_run(path: str | os.PathLike[str], given: str | None, runs: Collection[str]) -> str:
    """The run of a harness report: `given` (checked against the file name) or the one its name says."""
    label = report_label(path, runs)
    if given is not None and label is not None and label.run != given:
        raise OracleInputError(
            f"{path}: --harness-report --run {given!r} contradicts the file name, which says run "
            f"{label.run!r} (harness reports are named <model>.<run_id>.json)"
        )
    if given is not None:
        return given
    if label is None:
        raise OracleInputError(
            f"{path}: give --run RUN: the file name is not <model>.<run>.json for a run of the pool "
            f"({_runs_hint(runs)})"
        )
    return label.run


def trajectories_run(
    path: str | os.PathLike[str],
    given: str | None,
    model: str | None,
    reports: Sequence[ReportLabel],
) -> str:
    """The run of a trajectory directory recording `model`: `given`, checked against the harness report
    of that run, or the run of the one report of the same model."""
    if given is not None:
        for label in reports:
            if label.run == given and model is not None and label.model not in (None, model):
                raise OracleInputError(
                    f"{path}: --trajectories --run {given!r}: the trajectories record model {model!r}, "
                    f"but the harness report of run {given!r} ({label.path}) is of model {label.model!r}"
                )
        return given
    if model is None:
        raise OracleInputError(f"{path}: give --run RUN: the trajectories do not record their model")
    same = sorted({label.run for label in reports if label.model == model})
    if len(same) != 1:
        why = "no harness report" if not same else f"the harness reports of runs {same}"
        raise OracleInputError(
            f"{path}: give --run RUN: the trajectories record model {model!r}, and {why} of this build "
            "names that model"
        )
    return same[0]
