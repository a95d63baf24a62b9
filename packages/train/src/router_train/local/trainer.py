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
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict

from router_frontier_rl.bundled import BUNDLED_TABLE, bundled_table_path
from router_frontier_rl.rewards import REWARD_NAMES, RouteScores, score_completion, score_route
from router_frontier_rl.route_parser import format_route
from router_frontier_rl.split import select_tasks, stratified_folds, upsampled
from router_oracle.frontier import frontier_vertices
from router_oracle.infra.atomic_file import check_output_directory, publish_directory
from router_oracle.infra.file_hash import sha256_file
from router_oracle.table import OracleTable, TaskRecord
from router_oracle.table_check import load_table
from router_train.checkpoint_io import save_checkpoint
from router_train.local.checkpoint import checkpoint_of
from router_train.local.config import LocalTrainConfig, LocalTrainError, RewardWeights
from router_train.local.features import FeatureState, feature_dim, featurize, fit_features, unique_tasks
from router_train.local.grpo import AdamW, GRPOStep, grpo_step, task_batches
from router_train.local.grpo_run import GrpoAdapter, run_grpo
from router_train.local.heldout import HeldOutSummary, heldout_summary, router_metrics
from router_train.local.irt_features import check_irt_inputs
from router_train.local.policy import RouterPolicy, softmax
from router_train.local.row_batch import take_rows
from router_train.local.step_metrics import STEP_SCORES, StepMetrics, step_record
from router_train.scoring.decisions import Decisions, from_labels
from router_train.scoring.dial import RouterScores, calibrate_policy
from router_train.scoring.metrics import single_model_points
from router_train.scoring.safe_point import LOCAL_MARGINS, FitScored, checkpoint_safe_point

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
    prior_shift: float = 0.0
    """The tau of the prior shift folded into the router's bias (`pick_prior_shift`)."""


def reward_weights(weights: RewardWeights) -> tuple[float, ...]:
    """The config's weights as the env's 5-list, in `REWARD_NAMES` order."""
    return tuple(float(getattr(weights, name)) for name in REWARD_NAMES)


BUNDLED_TABLE_NAME = f"router_frontier_rl/data/{BUNDLED_TABLE}"
"""How the env's bundled table is named in checkpoints: the same on every machine."""


def _load(cfg: LocalTrainConfig) -> tuple[OracleTable, str, str]:
    """The table, the name it is recorded under (the path as given, or the bundled table's name) and
    the sha256 of its bytes."""
    path = cfg.table_path if cfg.table_path is not None else bundled_table_path()
    table = load_table(path)
    return table, str(cfg.table_path) if cfg.table_path is not None else BUNDLED_TABLE_NAME, sha256_file(path)


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
    warning: str | None
    """Set when training stalled (see `stall_warning`)."""
    prior_shift: float = 0.0
    """The tau of `pick_prior_shift` folded into the policy's bias (0: none)."""
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


def frontier_slope(tasks: Sequence[TaskRecord], pool_ids: Sequence[str]) -> float:
    """Resolved rate per USD along the first segment of the single models' mix frontier on `tasks`
    (from the cheapest corner); 0 when the cheapest model is also the best."""
    corners = frontier_vertices(single_model_points(tasks, pool_ids))
    if len(corners) < 2:
        return 0.0
    a, b = corners[0], corners[1]
    return (b.resolved - a.resolved) / (b.cost - a.cost)


PRIOR_SHIFTS = (4.0, 2.0, 1.0, 0.75, 0.5, 0.25, 0.0)
"""Candidate tau of the prior shift, from "route like the majority" (4: far past the train tasks' own
label mix) to "as balanced as training" (0). The first is the safe default the others must beat."""

MIN_TASKS_PER_SHIFT_FOLD = 10
"""Fewer train tasks per shift fold leave too little to choose a shift on: the shift is skipped."""

SHIFT_EVIDENCE = 1.0
"""A less conservative tau is taken only when its mean gain over the first, on the cross-fitted train
tasks, exceeds this many standard errors: a router should leave the safe choice on evidence, not noise."""


def _log_prior(tasks: Sequence[TaskRecord], pool_ids: Sequence[str]) -> np.ndarray:
    """log of each model's share of oracle labels on `tasks` (add-one smoothed: never log 0)."""
    counts = Counter(t.oracle for t in unique_tasks(tasks))
    total = sum(counts.values())
    return np.log(np.asarray([(counts[m] + 1) / (total + len(pool_ids)) for m in pool_ids]))


def pick_prior_shift(
    tasks: Sequence[TaskRecord], logits: np.ndarray, log_priors: np.ndarray, pool_ids: Sequence[str]
) -> float:
    """The tau of `PRIOR_SHIFTS` whose routes argmax(logits + tau x log prior) do best on `tasks`.

    `logits` and `log_priors` are per task (rows), each from a policy that never saw that task. A route
    scores resolved - slope x cost, the slope of the single models' mix frontier on `tasks`: a router
    above that line beats every random mix of single models there. The first (safest) tau stays unless
    another beats it by `SHIFT_EVIDENCE` standard errors of the paired per-task difference."""
    slope = frontier_slope(tasks, pool_ids)

    def per_task(tau: float) -> np.ndarray:
        routes = (logits + tau * log_priors).argmax(axis=1)
        return np.asarray(
            [
                (s := score_route(t, pool_ids[int(r)])).resolved_if_chosen - slope * s.cost_if_chosen
                for t, r in zip(tasks, routes, strict=True)
            ]
        )

    safe = per_task(PRIOR_SHIFTS[0])
    chosen, best_gain = PRIOR_SHIFTS[0], 0.0
    for tau in PRIOR_SHIFTS[1:]:
        diff = per_task(tau) - safe
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        gain = float(diff.mean())
        if gain > SHIFT_EVIDENCE * se and gain > best_gain + 1e-12:
            chosen, best_gain = tau, gain
    return chosen


def cross_fitted_shift(
    uniq: Sequence[TaskRecord],
    held_out: Iterable[tuple[Sequence[TaskRecord], RouterPolicy, Sequence[TaskRecord]]],
    pool_ids: Sequence[str],
) -> float:
    """`pick_prior_shift` on the cross-fitted train tasks `uniq`: `held_out` gives, per shift fold, its
    tasks, the policy trained on the rest and that rest (whose oracle labels make the fold's prior)."""
    logits: dict[str, np.ndarray] = {}
    priors: dict[str, np.ndarray] = {}
    for tasks, policy, rest in held_out:
        prior = _log_prior(rest, pool_ids)
        for t, row in zip(tasks, policy.logits(tasks), strict=True):
            logits[t.instance_id], priors[t.instance_id] = row, prior
    return pick_prior_shift(
        uniq,
        np.stack([logits[t.instance_id] for t in uniq]),
        np.stack([priors[t.instance_id] for t in uniq]),
        pool_ids,
    )


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
    """GRPO of a fresh policy on `train_tasks` (each task once; `cfg.upsample` repeats rare labels),
    then, with `cfg.shift_folds`, the prior shift chosen by cross-fitting (`pick_prior_shift`).

    Everything fitted (features, the upsampling, the shift) reads `train_tasks` only. `eval_tasks`, when
    given, are scored greedily every `steps/10` steps for the step records; they never change training.
    """
    pool_ids = list(pool_ids)
    uniq = unique_tasks(train_tasks)
    if not uniq:
        raise LocalTrainError("no train tasks to fit the local router on")
    if not cfg.shift_folds:
        return _grpo(cfg, list(train_tasks), pool_ids, eval_tasks, progress, on_step)
    if len(uniq) < MIN_TASKS_PER_SHIFT_FOLD * cfg.shift_folds:
        fit = _grpo(cfg, list(train_tasks), pool_ids, eval_tasks, progress, on_step)
        note = (
            f"no prior shift: {len(uniq)} train tasks are too few to choose it on {cfg.shift_folds} folds "
            f"(at least {MIN_TASKS_PER_SHIFT_FOLD} per fold)"
        )
        return fit.model_copy(update={"warning": "; ".join(w for w in (fit.warning, note) if w)})
    # Cross-fitting: each task's logits come from a policy trained without it.
    plain = cfg.model_copy(update={"shift_folds": 0})

    def held_out() -> Iterator[tuple[list[TaskRecord], RouterPolicy, list[TaskRecord]]]:
        for fold in stratified_folds(uniq, cfg.shift_folds, cfg.seed):
            held = set(fold)
            rest = [t for t in train_tasks if t.instance_id not in held]
            inner = _grpo(plain, rest, pool_ids, (), False, None, keep_records=False).policy
            yield [t for t in uniq if t.instance_id in held], inner, rest

    tau = cross_fitted_shift(uniq, held_out(), pool_ids)
    shift = tau * _log_prior(uniq, pool_ids)
    final = _grpo(plain, list(train_tasks), pool_ids, eval_tasks, progress, on_step, shift)
    return final.model_copy(update={"prior_shift": tau})


def _epoch_inputs(
    cfg: LocalTrainConfig, train_tasks: list[TaskRecord], pool_ids: list[str]
) -> tuple[
    list[TaskRecord],
    list[TaskRecord],
    FeatureState,
    sp.csr_matrix,
    np.ndarray,
    dict[str, np.ndarray],
    np.ndarray,
]:
    """A run's inputs: the distinct tasks, the epoch (upsampled), the fitted features, each distinct task's
    feature row, each epoch task's row index, the score table per step score and the rewards."""
    uniq = unique_tasks(train_tasks)
    epoch = upsampled(train_tasks, cfg.split_seed) if cfg.upsample else train_tasks
    weights_5 = reward_weights(cfg.reward)
    state = fit_features(cfg.features, uniq, pool_ids)
    # Featurise and score each distinct task once; upsampled copies share a row.
    row_of = {t.instance_id: r for r, t in enumerate(uniq)}
    x_uniq = featurize(cfg.features, state, uniq)
    task_rows = np.asarray([row_of[t.instance_id] for t in epoch], dtype=np.int64)
    scores = score_table(uniq, pool_ids)
    table = {f: np.asarray([[getattr(s, f) for s in row] for row in scores]) for f in STEP_SCORES}
    reward_of = np.asarray([[s.weighted(weights_5) for s in row] for row in scores])
    return uniq, epoch, state, x_uniq, task_rows, table, reward_of


def _grpo(
    cfg: LocalTrainConfig,
    train_tasks: list[TaskRecord],
    pool_ids: list[str],
    eval_tasks: Sequence[TaskRecord],
    progress: bool,
    on_step: Callable[[StepMetrics], None] | None,
    bias_shift: np.ndarray | None = None,
    keep_records: bool = True,
) -> FitResult:
    """The GRPO run itself; `bias_shift` is added to the final policy's bias (the prior shift).
    `keep_records` False skips the per-step records (the cross-fitting's inner runs need only the policy)."""
    uniq, epoch, state, x_uniq, task_rows, table, reward_of = _epoch_inputs(cfg, train_tasks, pool_ids)
    eval_tasks = list(eval_tasks)
    x_eval = featurize(cfg.features, state, eval_tasks) if eval_tasks else None

    k = len(pool_ids)
    dim = feature_dim(cfg.features, state)
    # Zero weights: the run starts from the uniform router, so the first samples explore every model.
    policy = RouterPolicy(pool_ids, cfg.features, state, np.zeros((dim, k)), np.zeros(k))
    opt = AdamW((dim, k), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(cfg.seed)
    batches = task_batches(len(epoch), cfg.tasks_per_step, rng)
    eval_every = max(cfg.steps // 10, 1)

    def step() -> tuple[np.ndarray, GRPOStep]:
        rows = task_rows[next(batches)]
        # `take_rows` is `batch_rows` as plain arrays: the same products, without a scipy matrix per step.
        x = take_rows(x_uniq, rows)
        probs = softmax(x.matmul(policy.weights) + policy.bias)  # `probabilities_from_features`

        def scores_of(actions: np.ndarray) -> dict[str, np.ndarray]:
            reward = {"reward": reward_of[rows[:, None], actions]}
            if not keep_records:  # the other scores feed only the step records
                return reward
            return {**reward, **{f: table[f][rows[:, None], actions] for f in STEP_SCORES}}

        def backprop(g_logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return x.t_matmul(g_logits), g_logits.sum(axis=0)  # logits = x @ weights + bias

        return probs, grpo_step(probs, scores_of, backprop, (policy.weights, policy.bias), opt, rng, cfg)

    def finish(trained: tuple[np.ndarray, np.ndarray]) -> None:
        # The policy that routes: the tail average, shifted (the last step's record scores it).
        policy.weights, policy.bias = trained
        if bias_shift is not None:
            policy.bias = policy.bias + bias_shift

    def record(step: int, taken: tuple[np.ndarray, GRPOStep]) -> StepMetrics:
        probs, done = taken
        held = (
            _greedy_eval(policy, eval_tasks, x_eval)
            if x_eval is not None and (step % eval_every == 0 or step == cfg.steps)
            else {}
        )
        share = {m: float((done.actions == j).mean()) for j, m in enumerate(pool_ids)}
        return step_record(step, probs, done, share, **held)

    run = run_grpo(
        GrpoAdapter((policy.weights, policy.bias), step, record if keep_records else None, finish),
        cfg.steps,
        average_tail=cfg.average_tail,
        progress=progress,
        desc="router-train local",
        on_step=on_step,
    )
    return FitResult(
        policy=policy,
        steps=run.records,
        train_task_ids=[t.instance_id for t in uniq],
        train_tasks=len(epoch),
        seconds_per_step=run.seconds_per_step,
        warning=stall_warning(run.records) if keep_records else None,
    )


def _scored(cfg: LocalTrainConfig, pool_ids: Sequence[str]) -> FitScored:
    """`LocalFitter.fit_scored` (the router named `local`) for the safe point's inner fits: the policy's
    greedy routes of the test tasks and its logits on train and test."""

    def fit(
        train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        policy = fit_policy(cfg, train, pool_ids).policy
        routes = policy.route(list(test))
        picks: dict[str, list[str | None]] = {t.instance_id: [r] for t, r in zip(test, routes, strict=True)}
        scores = RouterScores("local", list(pool_ids), policy.logits(list(train)), policy.logits(list(test)))
        return [from_labels("local", "local", picks)], [scores]

    return fit


def train_local(cfg: LocalTrainConfig, *, progress: bool = True) -> LocalTrainResult:
    """Train on the env's train split; write checkpoint / metrics / summary under `cfg.output_dir`."""
    start = time.perf_counter()
    # An unusable output path fails now, not after training.
    check_output_directory(cfg.output_dir, OUTPUT_FILES, [("--table", cfg.table_path)])
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
    if cfg.features.irt:
        where = f"{table_name} ({len(table.tasks)} tasks, --eval-fraction {cfg.eval_fraction})"
        check_irt_inputs(table.pool, table.tasks, len(unique_tasks(train_tasks)), where)

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
        learned = set(fit.train_task_ids)
        learned_tasks = [t for t in unique_tasks(train_tasks) if t.instance_id in learned]
        calibration = calibrate_policy(policy, learned_tasks)
        # Its default point, chosen on the train tasks as evaluate chooses it per fit (`scoring.safe_point`).
        logits = policy.logits(learned_tasks)
        fit_scored = _scored(cfg, pool_ids)
        safe = checkpoint_safe_point(
            fit_scored, "local", learned_tasks, pool_ids, logits, cfg.seed, LOCAL_MARGINS
        )
        ckpt = checkpoint_of(
            policy, cfg, table_name, table_sha, fit.train_task_ids, cfg.steps, calibration, safe
        )
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
        prior_shift=fit.prior_shift,
    )
