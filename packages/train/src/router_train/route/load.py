"""`load_router(RouterSpec) -> Router`: the one loader behind `router-train route`, the Python API and
any server; the checkpoint's kind is read from the file."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from router_frontier_rl.any_pool import pool_view
from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.capabilities import CapabilitySummary, summarize
from router_frontier_rl.split import select_tasks
from router_oracle.candidates import BUNDLED_CANDIDATES
from router_oracle.derive import CandidateIndex
from router_oracle.file_hash import sha256_file
from router_oracle.pool_file import load_pool
from router_oracle.table_check import load_table
from router_oracle.text_file import read_text_file
from router_oracle.validation_message import one_line
from router_train.anypool.checkpoint import load_any_pool_router
from router_train.local.checkpoint import policy_of, read_checkpoint
from router_train.route.baseline_checkpoint import baseline_calibration, read_baseline
from router_train.route.endpoint import EndpointRouter
from router_train.route.operating_point import Calibrator, apply_operating_point, training_tasks
from router_train.route.router import AnyPoolRouter, BaselineRouter, LocalRouter, Router
from router_train.route.spec import RouteError, RouterSpec
from router_train.scoring.dial import CHECKPOINT_POINTS, DialCalibration, calibrate, calibrate_policy
from router_train.text_features import tfidf_matrix

CHECKPOINT_KINDS = {
    "router-train-local": "local",
    "router-train-local-anypool": "local-anypool",
    "router-train-baseline": "baseline",
}
"""A checkpoint file's `kind` -> the router it holds."""


def checkpoint_kind(path: Path) -> str:
    """`local`, `local-anypool` or `baseline`: read from the file's `kind` field."""
    text = read_text_file(path, "checkpoint", RouteError)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RouteError(f"{path}: not a checkpoint: malformed JSON ({exc.msg}, line {exc.lineno})") from exc
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind not in CHECKPOINT_KINDS:
        raise RouteError(
            f"{path}: not a router checkpoint (kind {kind!r}; expected one of {', '.join(CHECKPOINT_KINDS)})"
        )
    return CHECKPOINT_KINDS[kind]


def load_router(spec: RouterSpec) -> Router:
    """The router `spec` names, checked against the pool, table and fallback it gives; every problem is
    one `RouteError` line naming the file or field."""
    try:
        router, calibrate = _load(spec)
        if spec.budget is not None or spec.dial is not None:
            router.calibration = apply_operating_point(router, spec, calibrate)
    except RouteError:
        raise
    except ValidationError as exc:
        raise RouteError(one_line(exc)) from exc
    except ValueError as exc:  # the oracle's, env's and trainers' input errors name their file already
        raise RouteError(str(exc)) from exc
    if spec.fallback is not None:
        if spec.fallback not in router.pool:
            raise RouteError(f"fallback {spec.fallback!r} is not a pool model ({', '.join(router.pool)})")
        router.fallback = spec.fallback
    return router


def _load(spec: RouterSpec) -> tuple[Router, Calibrator | None]:
    """The router and how to get its dial calibration (None: it has no dial)."""
    if spec.checkpoint is None:
        return EndpointRouter(spec, endpoint_summary(spec)), None
    path = spec.checkpoint
    kind = checkpoint_kind(path)
    if kind == "local-anypool":
        return _any_pool(spec, path)
    if spec.candidates is not None:
        raise RouteError(f"--candidates applies to any-pool checkpoints; {path} is a {kind} checkpoint")
    if kind == "local":
        ckpt = read_checkpoint(path)
        _check_fixed(spec, path, ckpt.pool_ids, ckpt.table, ckpt.table_sha256)
        policy = policy_of(ckpt)

        def local_calibration() -> DialCalibration:
            if ckpt.calibration is not None:
                return ckpt.calibration
            tasks = training_tasks(path, spec, ckpt.table, ckpt.table_sha256, ckpt.train_task_ids)
            return calibrate_policy(policy, tasks)

        return LocalRouter(policy, f"local:{path}"), local_calibration
    baseline = read_baseline(path)
    _check_fixed(spec, path, baseline.pool_ids, baseline.table, baseline.table_sha256)
    router = BaselineRouter(baseline, f"{baseline.name}:{path}")
    if baseline.fit.method == "cheapest":
        return router, None

    def baseline_dial_table() -> DialCalibration:
        if baseline.calibration is not None:
            return baseline.calibration
        tasks = training_tasks(path, spec, baseline.table, baseline.table_sha256, baseline.train_task_ids)
        x = tfidf_matrix(tasks, baseline.vocabulary, baseline.idf)
        cal = baseline_calibration(baseline.fit, x, tasks, baseline.pool_ids)
        assert cal is not None
        return cal

    return router, baseline_dial_table


def _check_fixed(spec: RouterSpec, path: Path, pool_ids: list[str], table: str, table_sha256: str) -> None:
    """A fixed-pool checkpoint routes its own pool: a pool or table given must be the one it learned."""
    if spec.pool is not None:
        ids = load_pool(spec.pool).ids
        if sorted(ids) != sorted(pool_ids):
            raise RouteError(
                f"{path}: trained for the pool {', '.join(pool_ids)}, not the pool of {spec.pool} "
                f"({', '.join(ids)}); an any-pool checkpoint routes other pools"
            )
    if spec.table is not None:
        got = sha256_file(spec.table)
        if got != table_sha256:
            raise RouteError(
                f"{path}: trained on table {table} (sha256 {table_sha256[:16]}...), but {spec.table} "
                f"has sha256 {got[:16]}..."
            )


def _any_pool(spec: RouterSpec, path: Path) -> tuple[Router, Calibrator]:
    if spec.pool is None:
        raise RouteError(f"{path}: an any-pool checkpoint needs --pool POOL.toml (the models to route among)")
    if spec.table is not None:
        raise RouteError(
            f"{path}: an any-pool checkpoint reads a candidates table: give --candidates, not --table"
        )
    ids = load_pool(spec.pool).ids
    index = CandidateIndex.load(str(spec.candidates)) if spec.candidates is not None else None
    model_router = load_any_pool_router(path, index)
    router = AnyPoolRouter(model_router, ids, f"local-anypool:{path}")

    def pool_calibration() -> DialCalibration:
        # Pool-specific: the checkpoint's train tasks, with this pool's outcomes from the candidates table.
        view = router.view
        tasks = model_router.index.records(
            model_router.index.pool(view.ids, name="drawn"), model_router.train_task_ids
        )
        return calibrate(
            model_router.policy.logits(tasks, view), tasks, view.ids, max_points=CHECKPOINT_POINTS
        )

    return router, pool_calibration


def endpoint_summary(spec: RouterSpec) -> CapabilitySummary:
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
