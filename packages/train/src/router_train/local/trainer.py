"""`train_local`: GRPO of the linear router on the env's train split, scored by the env's own reward.

Each step draws `tasks_per_step` train tasks (epoch by epoch, seeded), samples `samples_per_task`
routes per task from the policy, scores each as the completion `format_route(model_id)` with the env's
`score_completion` (weighted by the env's `RouteScores.weighted`; see `score_table`), turns rewards
into advantages within each task's group, and takes one AdamW step on the policy gradient.

`fit_policy` trains in memory on any list of tasks (cross-validation folds use it); `train_local` is
the `router-train local` job: the env's split, then the files.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict
from tqdm import tqdm

from router_frontier_rl.bundled import BUNDLED_TABLE, bundled_table_path
from router_frontier_rl.rewards import REWARD_NAMES, RouteScores, score_completion, score_route
from router_frontier_rl.route_parser import format_route
from router_frontier_rl.split import select_tasks, stratified_folds, upsampled
from router_oracle.atomic_file import output_directory, publish_directory
from router_oracle.file_hash import sha256_file
from router_oracle.table import OracleTable, TaskRecord, load_table
from router_train.local.checkpoint import checkpoint_of, save_checkpoint
from router_train.local.config import LocalTrainConfig, LocalTrainError, RewardWeights
from router_train.local.features import feature_dim, featurize, fit_features, unique_tasks
from router_train.local.grpo import AdamW, clip_grad_norm, group_advantages, policy_gradient, sample_actions
from router_train.local.heldout import HeldOutSummary, heldout_summary, router_metrics
from router_train.local.policy import RouterPolicy
from router_train.local.step_metrics import StepMetrics

CHECKPOINT_FILE = "checkpoint.json"
METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"
OUTPUT_FILES = (CHECKPOINT_FILE, METRICS_FILE, SUMMARY_FILE, f".{METRICS_FILE}.partial")
"""What a run writes into its output directory (the last: where older versions streamed metrics)."""


class LocalTrainResult(BaseModel):
    """What a finished run produced."""

    model_config = ConfigDict(frozen=True)

    checkpoint_path: Path
    """The trained router (`load_policy(checkpoint_path)`)."""
    metrics_path: Path
    """One JSON object per step (`metrics.jsonl`)."""
    summary_path: Path
    """The held-out summary as JSON (`summary.json`)."""
    summary: HeldOutSummary
    """The trained router against the baselines on the held-out split."""
    steps: int
    """GRPO steps taken."""
    train_tasks: int
    """Train tasks per epoch (after upsampling)."""
    wall_seconds: float
    """Wall time of the whole run (not written to any file: files are deterministic)."""
    seconds_per_step: float
    """Mean wall time of one GRPO step."""
    warning: str | None = None
    """Set when training stalled (`stall_warning`); the CLI prints it."""


def reward_weights(weights: RewardWeights) -> tuple[float, ...]:
    """The config's weights as the env's 5-list, in `REWARD_NAMES` order."""
    return tuple(float(getattr(weights, name)) for name in REWARD_NAMES)


def _batches(n: int, size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Endless task batches: each epoch a fresh permutation, batches may straddle two epochs."""
    buf = np.empty(0, dtype=np.int64)
    while True:
        while len(buf) < size:
            buf = np.concatenate([buf, rng.permutation(n)])
        yield buf[:size]
        buf = buf[size:]


BUNDLED_TABLE_NAME = f"router_frontier_rl/data/{BUNDLED_TABLE}"
"""How the env's bundled table is named in checkpoints: the same on every machine."""


def _load(cfg: LocalTrainConfig) -> tuple[OracleTable, str, str]:
    """The table, the name it is recorded under (the path as given, or the bundled table's name) and
    the sha256 of its bytes."""
    path = cfg.table_path if cfg.table_path is not None else bundled_table_path()
    table = load_table(path)
    return table, str(cfg.table_path) if cfg.table_path is not None else BUNDLED_TABLE_NAME, sha256_file(path)


def _r(x: float) -> float:
    return round(float(x), 6) + 0.0


def _greedy_eval(
    policy: RouterPolicy, eval_tasks: list[TaskRecord], x_eval: sp.csr_matrix
) -> dict[str, float]:
    m = router_metrics(eval_tasks, policy.route_from_features(x_eval))
    return {
        "heldout_reward": m.mean_reward,
        "heldout_accuracy": m.accuracy,
        "heldout_resolved": m.resolved_rate,
        "heldout_mean_cost": m.mean_cost,
    }


class FitResult(BaseModel):
    """A policy fitted in memory by `fit_policy` (no files)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    policy: RouterPolicy
    """The trained router."""
    steps: list[StepMetrics]
    """One record per GRPO step, in order."""
    chosen_step: int
    """The step whose weights the policy holds: the last, or the best on the inner validation tasks."""
    warning: str | None
    """Set when training stalled (see `stall_warning`)."""
    prior_shift: float = 0.0
    """The tau of `choose_prior_shift` folded into the policy's bias (0: none)."""
    train_task_ids: list[str]
    """The distinct tasks it learned from, sorted (the leakage guard of `router-train evaluate`)."""
    train_tasks: int
    """Train tasks per epoch (after upsampling)."""
    seconds_per_step: float
    """Mean wall time of one GRPO step."""


def score_table(tasks: Sequence[TaskRecord], pool_ids: Sequence[str]) -> list[list[RouteScores]]:
    """The env's scores of every (task, model) route, scored once: `score_completion` of the completion
    `format_route(model)`. A route's scores depend only on the task and the model, so sampling a route
    looks its scores up here instead of re-parsing the same completion thousands of times."""
    texts = [format_route(m) for m in pool_ids]
    return [[score_completion(t, text, pool_ids) for text in texts] for t in tasks]


def inner_validation(
    cfg: LocalTrainConfig, train_tasks: list[TaskRecord]
) -> tuple[list[TaskRecord], list[TaskRecord]]:
    """(tasks to fit on, inner validation tasks): `cfg.val_fraction` of the distinct train tasks, one
    fold of a stratified split (`router_frontier_rl.split.stratified_folds`), or none."""
    if cfg.val_fraction == 0:
        return train_tasks, []
    uniq = unique_tasks(train_tasks)
    k = max(2, round(1 / cfg.val_fraction))
    if len(uniq) < 2 * k:
        raise LocalTrainError(
            f"{len(uniq)} train tasks are too few to hold out val_fraction {cfg.val_fraction} of them"
        )
    held = set(stratified_folds(uniq, k, cfg.seed)[0])
    return [t for t in train_tasks if t.instance_id not in held], [t for t in uniq if t.instance_id in held]


def frontier_slope(tasks: Sequence[TaskRecord], pool_ids: Sequence[str]) -> float:
    """Resolved rate per USD along the first segment of the single models' mix frontier on `tasks`
    (from the cheapest corner); 0 when the cheapest model is also the best."""
    from router_oracle.frontier import frontier_vertices
    from router_train.evaluate.metrics import single_model_points

    corners = frontier_vertices(single_model_points(tasks, pool_ids))
    if len(corners) < 2:
        return 0.0
    a, b = corners[0], corners[1]
    return (b.resolved - a.resolved) / (b.cost - a.cost)


def validation_score(
    cfg: LocalTrainConfig, tasks: Sequence[TaskRecord], routes: Sequence[str], slope: float
) -> float:
    """The inner validation score of greedy `routes` (higher is better), per `cfg.val_metric`."""
    scores = [score_route(t, r) for t, r in zip(tasks, routes, strict=True)]
    if cfg.val_metric == "frontier":
        return sum(s.resolved_if_chosen - slope * s.cost_if_chosen for s in scores) / len(scores)
    rewards = [s.routed_reward for s in scores]
    if cfg.val_metric == "reward":
        return sum(rewards) / len(rewards)
    by_label: dict[str, list[float]] = {}
    for t, rew in zip(tasks, rewards, strict=True):
        by_label.setdefault(t.oracle, []).append(rew)
    return sum(sum(v) / len(v) for v in by_label.values()) / len(by_label)


PRIOR_SHIFTS = (4.0, 2.0, 1.0, 0.75, 0.5, 0.25, 0.0)
"""Candidate tau of `choose_prior_shift`, from "the train tasks' label mix" to "balanced"; on a tie the
earlier (more conservative) one wins."""


def choose_prior_shift(
    cfg: LocalTrainConfig,
    policy: RouterPolicy,
    fit_tasks: Sequence[TaskRecord],
    val_tasks: Sequence[TaskRecord],
    x_val: sp.csr_matrix,
    slope: float,
) -> float:
    """Add tau x log(label share on the fit tasks) to the policy's bias, tau chosen on the validation tasks.

    Upsampling trains the policy on a balanced label mix; a balanced router routes rare labels far more
    often than their share. Adding tau log(prior) to the logits is the Bayes correction back towards
    the real mix (tau = 1: all the way). Which tau serves a pool best depends on its costs, so it is
    chosen on tasks the policy never trained on, by `validation_score`. Returns the tau chosen."""
    counts = Counter(t.oracle for t in unique_tasks(fit_tasks))
    total = sum(counts.values())
    # Add-one smoothing: a label absent from the fit tasks gets a small share, not log(0).
    log_prior = np.log(
        np.asarray([(counts[m] + 1) / (total + len(policy.pool_ids)) for m in policy.pool_ids])
    )
    base = policy.bias.copy()
    best: tuple[float, float] | None = None
    for tau in PRIOR_SHIFTS:
        policy.bias = base + tau * log_prior
        score = validation_score(cfg, val_tasks, policy.route_from_features(x_val), slope)
        if best is None or score > best[0] + 1e-12:
            best = (score, tau)
    assert best is not None
    policy.bias = base + best[1] * log_prior
    return best[1]


STALL_SIGNAL = 0.05
"""Share of groups with a non-zero advantage under which a step teaches (almost) nothing."""


def stall_warning(records: Sequence[StepMetrics]) -> str | None:
    """A warning when the last quarter of the run learned (almost) nothing: in GRPO a group whose samples
    all route alike has zero advantage, so once the policy is near-deterministic the gradient vanishes."""
    tail = records[-max(1, len(records) // 4) :]
    signal = sum(r.groups_with_signal for r in tail) / len(tail)
    zero = sum(r.grad_norm == 0 for r in tail)
    if signal >= STALL_SIGNAL:
        return None
    return (
        f"training stalled: over the last {len(tail)} steps only {100 * signal:.1f}% of task groups had "
        f"a non-zero advantage ({zero} steps with a zero gradient); the policy routes near-"
        "deterministically and GRPO gets no signal (try --upsample, a lower --lr or more --weight-decay)"
    )


def fit_policy(
    cfg: LocalTrainConfig,
    train_tasks: Sequence[TaskRecord],
    pool_ids: Sequence[str],
    *,
    eval_tasks: Sequence[TaskRecord] = (),
    progress: bool = False,
    on_step: Callable[[StepMetrics], None] | None = None,
) -> FitResult:
    """GRPO of a fresh policy on `train_tasks` (each task once; `cfg.upsample` repeats rare labels).

    Everything fitted (features, the upsampling) reads `train_tasks` only. `eval_tasks`, when given,
    are scored greedily every `steps/10` steps for the step records; they never change training.
    """
    pool_ids = list(pool_ids)
    uniq = unique_tasks(train_tasks)
    if not uniq:
        raise LocalTrainError("no train tasks to fit the local router on")
    if cfg.shift_folds:
        return _fit_with_crossfitted_shift(cfg, list(train_tasks), pool_ids, eval_tasks, progress, on_step)
    fit_tasks, val_tasks = inner_validation(cfg, list(train_tasks))
    epoch = upsampled(fit_tasks, cfg.split_seed) if cfg.upsample else fit_tasks
    weights_5 = reward_weights(cfg.reward)

    state = fit_features(cfg.features, unique_tasks(fit_tasks))
    # Featurise and score each distinct task once; upsampled copies share a row.
    row_of = {t.instance_id: r for r, t in enumerate(uniq)}
    x_uniq = featurize(cfg.features, state, uniq)
    task_rows = np.asarray([row_of[t.instance_id] for t in epoch], dtype=np.int64)
    scores = score_table(uniq, pool_ids)
    fields = ("routed_reward", "chose_oracle", "resolved_if_chosen", "cost_if_chosen")
    table = {f: np.asarray([[getattr(s, f) for s in row] for row in scores]) for f in fields}
    reward_of = np.asarray([[s.weighted(weights_5) for s in row] for row in scores])
    eval_tasks = list(eval_tasks)
    x_eval = featurize(cfg.features, state, eval_tasks) if eval_tasks else None
    x_val = featurize(cfg.features, state, val_tasks) if val_tasks else None
    slope = frontier_slope(unique_tasks(fit_tasks), pool_ids) if val_tasks else 0.0
    best: tuple[float, int, np.ndarray, np.ndarray] | None = None  # (val score, step, weights, bias)

    k = len(pool_ids)
    dim = feature_dim(cfg.features, state)
    # Zero weights: the run starts from the uniform router, so the first samples explore every model.
    policy = RouterPolicy(pool_ids, cfg.features, state, np.zeros((dim, k)), np.zeros(k))
    tail_start = cfg.steps - round(cfg.average_tail * cfg.steps)
    tail_w, tail_b = np.zeros((dim, k)), np.zeros(k)
    opt = AdamW((dim, k), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(cfg.seed)
    batches = _batches(len(epoch), cfg.tasks_per_step, rng)
    eval_every = max(cfg.steps // 10, 1)
    records: list[StepMetrics] = []
    step_times: list[float] = []
    # disable=None: no bar when stderr is not a terminal (logs, CI), where every redraw is a line.
    bar = tqdm(
        range(1, cfg.steps + 1),
        desc="router-train local",
        disable=None if progress else True,
        unit="step",
        mininterval=0.25,
    )
    for step in bar:
        t0 = time.perf_counter()
        rows = task_rows[next(batches)]
        x = x_uniq[rows]
        probs = policy.probabilities_from_features(x)
        actions = sample_actions(probs, cfg.samples_per_task, rng)
        rewards = reward_of[rows[:, None], actions]
        adv = group_advantages(rewards, cfg.adv_eps, cfg.advantage)
        grad_w, grad_b = policy_gradient(x, probs, actions, adv)
        grad_norm = clip_grad_norm(grad_w, grad_b, cfg.max_grad_norm)
        opt.step(policy.weights, policy.bias, grad_w, grad_b)
        if step > tail_start:
            tail_w += policy.weights
            tail_b += policy.bias
        step_times.append(time.perf_counter() - t0)

        entropy = float(-(probs * np.log(np.clip(probs, 1e-12, None))).sum(axis=1).mean())
        held = (
            _greedy_eval(policy, eval_tasks, x_eval)
            if x_eval is not None and (step % eval_every == 0 or step == cfg.steps)
            else {}
        )
        record = StepMetrics(
            step=step,
            reward=_r(rewards.mean()),
            **{f: _r(table[f][rows[:, None], actions].mean()) for f in fields},
            entropy=_r(entropy),
            groups_with_signal=_r(float((rewards.std(axis=1) > 0).mean())),
            grad_norm=_r(grad_norm),
            route_share={m: _r(float((actions == j).mean())) for j, m in enumerate(pool_ids)},
            **held,
        )
        if (
            x_val is not None
            and cfg.val_select == "step"
            and (step % cfg.val_every == 0 or step == cfg.steps)
        ):
            score = validation_score(cfg, val_tasks, policy.route_from_features(x_val), slope)
            record = record.model_copy(update={"val_score": _r(score)})
            if best is None or score > best[0] + 1e-12:
                best = (score, step, policy.weights.copy(), policy.bias.copy())
        records.append(record)
        if on_step is not None:
            on_step(record)
        bar.set_postfix(reward=f"{record.reward:.3f}", entropy=f"{entropy:.3f}", refresh=False)
    bar.close()
    chosen = cfg.steps
    if best is not None:
        _, chosen, policy.weights, policy.bias = best
    elif cfg.steps > tail_start:
        policy.weights, policy.bias = tail_w / (cfg.steps - tail_start), tail_b / (cfg.steps - tail_start)
    shift = 0.0
    if x_val is not None and cfg.val_select == "prior_shift":
        shift = choose_prior_shift(cfg, policy, fit_tasks, val_tasks, x_val, slope)
    return FitResult(
        policy=policy,
        steps=records,
        chosen_step=chosen,
        train_task_ids=[t.instance_id for t in uniq],
        train_tasks=len(epoch),
        seconds_per_step=sum(step_times) / len(step_times),
        warning=stall_warning(records),
        prior_shift=shift,
    )


def _log_prior(tasks: Sequence[TaskRecord], pool_ids: Sequence[str]) -> np.ndarray:
    """log of each model's share of oracle labels on `tasks` (add-one smoothed: never log 0)."""
    counts = Counter(t.oracle for t in unique_tasks(tasks))
    total = sum(counts.values())
    return np.log(np.asarray([(counts[m] + 1) / (total + len(pool_ids)) for m in pool_ids]))


def _fit_with_crossfitted_shift(
    cfg: LocalTrainConfig,
    train_tasks: list[TaskRecord],
    pool_ids: list[str],
    eval_tasks: Sequence[TaskRecord],
    progress: bool,
    on_step: Callable[[StepMetrics], None] | None,
) -> FitResult:
    """`shift_folds` inner fits score every train task out of fold; tau is chosen on all of them; the
    final policy is trained on every train task and shifted by that tau."""
    plain = cfg.model_copy(update={"shift_folds": 0, "val_fraction": 0.0})
    uniq = unique_tasks(train_tasks)
    folds = stratified_folds(uniq, cfg.shift_folds, cfg.seed)
    logits: dict[str, np.ndarray] = {}
    priors: dict[str, np.ndarray] = {}
    for fold in folds:
        held = set(fold)
        inner = fit_policy(plain, [t for t in train_tasks if t.instance_id not in held], pool_ids)
        tasks = [t for t in uniq if t.instance_id in held]
        z = np.asarray(inner.policy.featurize(tasks) @ inner.policy.weights) + inner.policy.bias
        prior = _log_prior([t for t in uniq if t.instance_id not in held], pool_ids)
        for t, row in zip(tasks, z, strict=True):
            logits[t.instance_id], priors[t.instance_id] = row, prior
    slope = frontier_slope(uniq, pool_ids)
    z_all = np.stack([logits[t.instance_id] for t in uniq])
    p_all = np.stack([priors[t.instance_id] for t in uniq])
    best: tuple[float, float] | None = None
    for tau in PRIOR_SHIFTS:
        routes = [pool_ids[int(i)] for i in (z_all + tau * p_all).argmax(axis=1)]
        score = validation_score(cfg, uniq, routes, slope)
        if best is None or score > best[0] + 1e-12:
            best = (score, tau)
    assert best is not None
    final = fit_policy(
        plain, train_tasks, pool_ids, eval_tasks=eval_tasks, progress=progress, on_step=on_step
    )
    final.policy.bias = final.policy.bias + best[1] * _log_prior(uniq, pool_ids)
    return final.model_copy(update={"prior_shift": best[1]})


def train_local(cfg: LocalTrainConfig, *, progress: bool = True) -> LocalTrainResult:
    """Train on the env's train split; write checkpoint / metrics / summary under `cfg.output_dir`."""
    start = time.perf_counter()
    output_directory(cfg.output_dir)  # an unusable output path fails now, not after training
    table, table_name, table_sha = _load(cfg)
    pool_ids = table.pool.ids
    try:
        train_tasks = select_tasks(table, "train", eval_fraction=cfg.eval_fraction, split_seed=cfg.split_seed)
        eval_tasks = select_tasks(table, "eval", eval_fraction=cfg.eval_fraction, split_seed=cfg.split_seed)
    except ValueError as exc:
        raise LocalTrainError(f"{table_name}: cannot split the table: {exc}") from exc
    if not train_tasks or not eval_tasks:
        raise LocalTrainError(
            f"{table_name}: the split has {len(train_tasks)} train and {len(eval_tasks)} held-out tasks; "
            "both must be non-empty (use a bigger table or another --eval-fraction)"
        )

    out = Path(cfg.output_dir)
    # All three files are written into a fresh directory beside `out` (metrics stream there, tail-able)
    # and swapped in together at the end: an interrupted or failed run leaves the previous run's files.
    with publish_directory(out, owned=OUTPUT_FILES) as staged:
        with open(staged / METRICS_FILE, "w", encoding="utf-8") as mfh:

            def stream(record: StepMetrics) -> None:
                mfh.write(record.to_line())
                mfh.flush()

            fit = fit_policy(
                cfg, train_tasks, pool_ids, eval_tasks=eval_tasks, progress=progress, on_step=stream
            )
        policy = fit.policy
        ckpt = checkpoint_of(policy, cfg, table_name, table_sha, fit.train_task_ids, fit.chosen_step)
        save_checkpoint(ckpt, staged / CHECKPOINT_FILE)
        summary = heldout_summary(eval_tasks, pool_ids, policy.route(eval_tasks))
        (staged / SUMMARY_FILE).write_text(
            json.dumps(summary.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8"
        )
    return LocalTrainResult(
        checkpoint_path=out / CHECKPOINT_FILE,
        metrics_path=out / METRICS_FILE,
        summary_path=out / SUMMARY_FILE,
        summary=summary,
        steps=cfg.steps,
        train_tasks=fit.train_tasks,
        wall_seconds=time.perf_counter() - start,
        seconds_per_step=fit.seconds_per_step,
        warning=fit.warning,
    )
