"""`load_router(RouterSpec) -> Router`: the one loader behind `router-train route`, the Python API and
any server; the checkpoint's kind is read from the file and loaded by its entry of `route.kinds.KINDS`."""

from __future__ import annotations

from typing import overload

from pydantic import ValidationError

from router_frontier_rl.any_pool import pool_view
from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.capabilities import CapabilitySummary, summarize
from router_frontier_rl.split import select_tasks
from router_oracle.candidates import BUNDLED_CANDIDATES
from router_oracle.derive import CandidateIndex
from router_oracle.infra.validation_message import one_line
from router_oracle.pool_file import load_pool
from router_oracle.table_check import load_table
from router_train.route.endpoint import EndpointRouter
from router_train.route.kinds import kind_of
from router_train.route.operating_point import point_for
from router_train.route.router import Router, ScoringRouter
from router_train.route.spec import CheckpointSpec, EndpointSpec, RouteError, RouterSpec


@overload
def load_router(spec: CheckpointSpec) -> ScoringRouter: ...
@overload
def load_router(spec: EndpointSpec) -> EndpointRouter: ...
@overload
def load_router(spec: RouterSpec) -> Router: ...
def load_router(spec: RouterSpec) -> Router:
    """The router `spec` names, checked against the pool, table and fallback it gives, built once at its
    operating point; every problem is one `RouteError` line naming the file or field."""
    try:
        router = _load(spec)
    except RouteError:
        raise
    except ValidationError as exc:
        raise RouteError(one_line(exc)) from exc
    except ValueError as exc:  # the oracle's, env's and trainers' input errors name their file already
        raise RouteError(str(exc)) from exc
    if spec.fallback is not None and spec.fallback not in router.pool:
        raise RouteError(f"fallback {spec.fallback!r} is not a pool model ({', '.join(router.pool)})")
    return router


def _load(spec: RouterSpec) -> Router:
    if isinstance(spec, EndpointSpec):
        return EndpointRouter(spec, endpoint_summary(spec))
    loaded = kind_of(spec.checkpoint).load(spec.checkpoint, spec)
    return ScoringRouter(loaded.scorer, point_for(loaded.scorer, spec, loaded.calibrate, loaded.safe_point))


def endpoint_summary(spec: EndpointSpec) -> CapabilitySummary:
    """The capability summary the env puts in the system prompt: the table's pool (or `spec.pool`'s models
    from the candidates table) on the env's train split of the table (`RouterTaskset.load`)."""
    table = load_table(spec.table or bundled_table_path())
    train = select_tasks(table, "train", spec.eval_fraction, spec.split_seed)
    if spec.pool is None:
        if spec.candidates is not None:
            raise RouteError("--candidates applies with --pool (the models whose statistics it holds)")
        return summarize(train, table.pool)
    index = CandidateIndex.load(str(spec.candidates or BUNDLED_CANDIDATES))
    _, _, summary = pool_view(index, load_pool(spec.pool).ids, [t.instance_id for t in train])
    return summary
