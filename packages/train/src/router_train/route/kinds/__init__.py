"""The registry of router kinds, routing side: every saved router `route`, `serve` and `evaluate
--checkpoint` read is one of `KINDS`, found by its file's `kind` field (`kind_of`). How each kind is
fitted (evaluate's fitters, references, refit) is the fitting side's registry, `router_train.fitting.FITS`,
above the trainers: a serving process imports this one alone.

A new router kind is one class and a registry line on each side, routing and fitting. Routing
(`route/kinds/`, below everything that fits): a `Scorer` subclass (`route.deploy.Scorer`: per task a
score for each pool model; `route.deploy.deploy` turns them and the checkpoint's operating point into
the route) in its own module of `route/kinds/`, beside that module's `KIND = RouterKind(name,
checkpoint, load, judge)`: its checkpoint model (a `FrozenModel` whose `kind:
Literal["router-train-..."]` default marks the file, written and read with `checkpoint_io`), `load`
(the router for `route` and `serve`) and `judge` (the router for `evaluate --checkpoint`); its registry
line: that `KIND` in `KINDS` in `route/kinds/__init__.py`, with its checkpoint model in the `Checkpoint`
union beside it. Fitting (`fitting/`, above the trainers): its own module of `fitting/` with `FIT =
Fit(kind, command)`, the command that fits it, and what applies of `fitters` (what `evaluate` runs for
it), `margins` and `refit` (for `feedback --refit`: the checkpoint refitted to serve's logged
outcomes); its registry line: that `FIT` in `FITS` in `fitting/__init__.py`. `test_train_router_kinds.py`
then runs the kind through `route`, the cost dial and `evaluate --checkpoint` once its `CHECKPOINTS`
entry makes a small checkpoint of it, and checks that both registries hold it.
(The same statement as `kind.RouterKind`'s and docs/development.md's; `test_train_docs_statements.py`
holds the three to it.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from pydantic import Field

from router_oracle.infra.text_file import read_text_file
from router_train.anypool.checkpoint import AnyPoolCheckpoint
from router_train.irt.checkpoint import IrtCheckpoint
from router_train.local.checkpoint import LocalCheckpoint
from router_train.route.baseline_checkpoint import BaselineCheckpoint
from router_train.route.kinds import anypool, baseline, irt, local
from router_train.route.kinds.kind import Judged, Loaded, RouterKind
from router_train.route.spec import RouteError

KINDS: dict[str, RouterKind] = {k.kind: k for k in (local.KIND, anypool.KIND, baseline.KIND, irt.KIND)}
"""A checkpoint file's `kind` string -> its kind, in the order messages list them."""

Checkpoint = Annotated[
    LocalCheckpoint | AnyPoolCheckpoint | BaselineCheckpoint | IrtCheckpoint, Field(discriminator="kind")
]
"""Any saved router's file, discriminated on `kind` (one member per entry of `KINDS`)."""


def kind_of(path: Path) -> RouterKind:
    """The kind of the checkpoint at `path`, read from the file's `kind` field; one `RouteError` line
    when the file is unreadable, not JSON or no router checkpoint."""
    text = read_text_file(path, "checkpoint", RouteError)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RouteError(f"{path}: not a checkpoint: malformed JSON ({exc.msg}, line {exc.lineno})") from exc
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind not in KINDS:
        raise RouteError(
            f"{path}: not a router checkpoint (kind {kind!r}; expected one of {', '.join(KINDS)})"
        )
    return KINDS[kind]


__all__ = ["KINDS", "Checkpoint", "Judged", "Loaded", "RouterKind", "kind_of"]
