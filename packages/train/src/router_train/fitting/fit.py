"""How a router kind is fitted (`Fit`, the fitting side's registry entry, `fitting.FITS`) and what the
fitting commands ask of it: evaluate's fitters (`FitRequest`), evaluate-anypool's references and
partition rows (`ReferenceRequest`, `PartitionRequest`), feedback's refit from traffic (`RefitRequest`).
Above the trainers; nothing that routes imports it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from router_oracle.derive import CandidateIndex
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import OracleTable, TaskRecord
from router_oracle.task_input import TaskInput
from router_train.route.kinds.kind import RouterKind
from router_train.scoring.dial import RouterScores
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import CLASSIFIER_MARGINS, Margins

KindOptions = Mapping[str, object]
"""A request's per-kind options, keyed by kind name (`RouterKind.name`): each kind reads its own entry, of
its own type (`kind_option`), and no other; a kind without an entry is not asked for. `evaluate`'s:
`baseline` True (the learned baselines), `local` the local GRPO routers as (row name, `LocalTrainConfig`)
pairs, `irt` True. `evaluate-anypool`'s references: `local` its `LocalTrainConfig`; its partition rows:
`irt` its `IrtConfig`."""

T = TypeVar("T")


def kind_option(options: KindOptions, kind: str, expected: type[T], default: T) -> T:
    """The kind's entry of `options` (`default` when absent), checked to be of the type the kind reads."""
    value = options.get(kind, default)
    if not isinstance(value, expected):
        raise TypeError(f"the {kind} kind's options are a {expected.__name__}, not {type(value).__name__}")
    return value


@dataclass(frozen=True)
class FitRequest:
    """What `router-train evaluate` asks every kind to fit in each partition (`fitting.fitters_for`)."""

    table: OracleTable
    """The evaluated table: its pool is the fitted routers' pool."""
    tasks: Sequence[TaskRecord]
    """Every task the fits will route (a kind that reads other data checks that it covers them)."""
    options: KindOptions
    """Per kind, what to fit (`KindOptions`): `baseline` True unless `--no-baselines`; `local` the local
    GRPO routers, (row name, configuration) pairs: `local-grpo` with the defaults unless
    `--no-baselines`, then each `--local NAME=OPTIONS`; `irt` True with `--irt`."""
    task_features: str | None = None
    """`--task-features`: a file or bundled name (`router_train.task_features`) every learned router
    that can read task features takes as inputs beside the text (the logistic regressions, each local
    GRPO router without its own, the IRT task regressor), standardised on each fit's train tasks; None:
    none."""
    safe_point: bool = True
    """Each learned router routes at its safe default point, chosen on each fit's train tasks
    (`scoring.safe_point`); False (`--no-safe-point`): at its native point."""


@dataclass(frozen=True)
class ReferenceRequest:
    """What `router-train evaluate-anypool` asks every kind to fit on one evaluation pool alone, in every
    task partition: its fixed-pool references (`fitting.references_for`), what retraining for that
    pool buys next to the any-pool router."""

    pool: Sequence[str]
    """The evaluation pool's model ids: the fitted routers' pool."""
    options: KindOptions
    """Per kind, its references' settings (`KindOptions`): `local` the local GRPO reference's
    `LocalTrainConfig` (`local-grpo`: the defaults; few steps with `--quick`)."""


@dataclass(frozen=True)
class PartitionRequest:
    """What `router-train evaluate-anypool` asks a kind with a partition-shared row (`Fit.partition`) to
    fit in one task partition: one fit on the train tasks, routing every evaluation pool on the test
    tasks."""

    index: CandidateIndex
    """The candidates (every run's outcomes); a fit reads only the train tasks' rows."""
    train_ids: Sequence[str]
    """The partition's train task ids, in partition order."""
    test_ids: Sequence[str]
    """The partition's test task ids, in partition order: the tasks routed."""
    pools: Sequence[Sequence[str]]
    """Every distinct evaluation pool's model ids, in the report's order."""
    options: KindOptions
    """Per kind, its fit's settings (`KindOptions`): `irt` the `IrtConfig` whose grids (`--irt`) are
    searched by inner cross-validation on the train tasks."""
    seed: int
    """Seed of the fit."""
    label: str
    """The partition's name, for messages."""


PoolRoutes = tuple[list[str], RouterScores]
"""A partition-shared fit on one pool: its route of each test task (partition order) and its per-model
scores on the pool's train and test tasks (its cost dial's curve)."""


@dataclass(frozen=True)
class PartitionFit:
    """A row of `router-train evaluate-anypool` fitted once per task partition and shared by every
    evaluation pool of it (the `irt` row, `--irt`): what one fit on every run's train-task rows gives
    each pool."""

    row: str
    """The report's row name."""
    fit: Callable[[PartitionRequest], list[PoolRoutes]]
    """The partition's fit, one `PoolRoutes` per `PartitionRequest.pools` entry, in order."""


@dataclass(frozen=True)
class RefitRequest:
    """What `router-train feedback --refit` asks a kind to refit to a router's own traffic: the logged
    tasks with an outcome, each with the input it was routed on."""

    checkpoint: Path
    """The checkpoint to refit (its kind's file)."""
    tasks: Sequence[TaskInput]
    """The logged tasks' inputs (id, repo, issue text), in log order."""
    served: Sequence[str]
    """The pool model that served each."""
    resolved: np.ndarray
    """(tasks,) 1.0 resolved, 0.0 not."""
    cost: np.ndarray
    """(tasks,) USD; NaN where unpriced."""
    log: str
    """The decision log or store the outcomes came from (messages, the report)."""


class ModelEvidence(FrozenModel):
    """What the traffic showed of one pool model against the checkpoint's prior, for `feedback`'s shift
    test (`offpolicy.shift`)."""

    model: str
    """The pool model id."""
    outcomes: int
    """Logged tasks it served with an outcome."""
    resolved: int
    """Of them, resolved."""
    prior: float | None
    """The checkpoint's mean predicted resolve probability on those tasks (None: it served none)."""


@dataclass(frozen=True)
class Refitted:
    """A refit, not yet written: `feedback --refit` writes it only once every check has passed."""

    checkpoint: FrozenModel
    """The refitted checkpoint (what `route --checkpoint` and serve load)."""
    report: FrozenModel
    """What the refit changed (written beside it as `refit.json`)."""
    table: str
    """The same as text lines for the terminal."""
    evidence: Sequence[ModelEvidence]
    """Per pool model, the traffic against the prior."""
    native: Sequence[str]
    """The refitted router's native route of each logged task (what `feedback` estimates on the traffic
    to choose the refit's default point, `offpolicy.refit_point`; never the prior's point)."""
    cheapest: str
    """The pool's cheapest model by the refit's costs (that choice's fallback)."""


@dataclass(frozen=True)
class Fit:
    """How a kind is fitted: the command that writes its checkpoint, evaluate's fitters of it, its refit
    from traffic; the fitting side's entry of the kind (`fitting.FITS`).

    A new router kind is one class and a registry line on each side: see `route.kinds.RouterKind`.
    """

    kind: RouterKind
    """The kind fitted: its routing side's entry (`route.kinds.KINDS`), whose checkpoint this writes."""
    command: str
    """The command that trains or fits it and writes the checkpoint (docs, help)."""
    fitters: Callable[[FitRequest], list[Fitter]] | None = None
    """The fitters `router-train evaluate` runs in every partition for the request (each a
    `scoring.fitter.Fitter`, with `fit_scored` for the cost-dial curves; none where the request does not
    ask for the kind); None: evaluate does not fit this kind (e.g. `local-anypool`, judged across pools by
    `evaluate-anypool`)."""
    reference: bool = False
    """Its rows are references (the learned baselines): evaluate lists them before the other kinds'."""
    references: Callable[[ReferenceRequest], list[Fitter]] | None = None
    """`router-train evaluate-anypool`'s fixed-pool references of this kind for the request's pool, each
    fitted in every task partition: one with `fit_scored_many` runs every partition's training at once and
    gives its scores (its cost-dial curve), any other gives its decisions per partition; None: none."""
    reference_rows: tuple[str, ...] = ()
    """The rows `references` gives, in order (the report's reference rows, its plot's styles);
    `evaluate-anypool` checks every fit gives exactly these."""
    partition: PartitionFit | None = None
    """`router-train evaluate-anypool`'s row of this kind shared by every pool of a task partition
    (`--irt`); None: none."""
    anypool: object | None = None
    """How `router-train evaluate-anypool` trains it, for a kind that routes any pool (a
    `fitting.anypool.AnyPoolTraining`, typed there so this module imports no kind; read through
    `fitting.anypool_training`); None: not such a kind."""
    margins: Margins = CLASSIFIER_MARGINS
    """The margins its safe default point and its dial are held to (`scoring.safe_point.Margins`, chosen
    by measurement per kind): evaluate's fitters of it and the checkpoint its command writes use these."""
    refit: Callable[[RefitRequest], Refitted] | None = None
    """`router-train feedback --refit`: the checkpoint refitted to the logged outcomes (bad input: a
    `ValueError` line naming the file); None: the kind cannot be refitted from traffic."""

    @property
    def name(self) -> str:
        """The kind's short name (`RouterKind.name`)."""
        return self.kind.name
