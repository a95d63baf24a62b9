"""`train_local`: GRPO of the linear router on the env's train split, scored by the env's own reward.

Each step draws `tasks_per_step` train tasks (epoch by epoch, seeded), samples `samples_per_task`
routes per task from the policy, renders each as the completion `format_route(model_id)` and scores
it with the env's `score_completion` (weighted by the env's `RouteScores.weighted`), normalises
rewards within each task's group, and takes one AdamW step on the policy gradient.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict
from tqdm import tqdm

from router_frontier_rl.bundled import BUNDLED_TABLE, bundled_table_path
from router_frontier_rl.rewards import REWARD_NAMES, RouteScores, score_completion
from router_frontier_rl.route_parser import format_route
from router_frontier_rl.split import select_tasks
from router_oracle.atomic_file import output_directory, publish_directory
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


def _load(cfg: LocalTrainConfig) -> tuple[OracleTable, str]:
    """The table and the name it is recorded under (the path as given, or the bundled table's name)."""
    if cfg.table_path is not None:
        return load_table(cfg.table_path), str(cfg.table_path)
    return load_table(bundled_table_path()), BUNDLED_TABLE_NAME


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


def train_local(cfg: LocalTrainConfig, *, progress: bool = True) -> LocalTrainResult:
    """Train, write checkpoint / metrics / summary under `cfg.output_dir`, and return where they are."""
    start = time.perf_counter()
    output_directory(cfg.output_dir)  # an unusable output path fails now, not after training
    table, table_name = _load(cfg)
    pool_ids = table.pool.ids
    try:
        train_tasks = select_tasks(
            table, "train", eval_fraction=cfg.eval_fraction, split_seed=cfg.split_seed, upsample=cfg.upsample
        )
        eval_tasks = select_tasks(table, "eval", eval_fraction=cfg.eval_fraction, split_seed=cfg.split_seed)
    except ValueError as exc:
        raise LocalTrainError(f"{table_name}: cannot split the table: {exc}") from exc
    if not train_tasks or not eval_tasks:
        raise LocalTrainError(
            f"{table_name}: the split has {len(train_tasks)} train and {len(eval_tasks)} held-out tasks; "
            "both must be non-empty (use a bigger table or another --eval-fraction)"
        )
    weights_5 = reward_weights(cfg.reward)

    state = fit_features(cfg.features, train_tasks)
    # Featurise each distinct task once; upsampled copies share a row.
    uniq = unique_tasks(train_tasks)
    row_of = {t.instance_id: r for r, t in enumerate(uniq)}
    x_uniq = featurize(cfg.features, state, uniq)
    task_rows = np.asarray([row_of[t.instance_id] for t in train_tasks], dtype=np.int64)
    x_eval = featurize(cfg.features, state, eval_tasks)

    k = len(pool_ids)
    dim = feature_dim(cfg.features, state)
    # Zero weights: the run starts from the uniform router, so the first samples explore every model.
    policy = RouterPolicy(pool_ids, cfg.features, state, np.zeros((dim, k)), np.zeros(k))
    opt = AdamW((dim, k), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    rng = np.random.default_rng(cfg.seed)
    batches = _batches(len(train_tasks), cfg.tasks_per_step, rng)
    texts = [format_route(m) for m in pool_ids]

    out = Path(cfg.output_dir)
    eval_every = max(cfg.steps // 10, 1)
    step_times: list[float] = []
    # All three files are written into a fresh directory beside `out` (metrics stream there, tail-able)
    # and swapped in together at the end: an interrupted or failed run leaves the previous run's files.
    with publish_directory(out, owned=OUTPUT_FILES) as staged:
        with open(staged / METRICS_FILE, "w", encoding="utf-8") as mfh:
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
                idx = next(batches)
                tasks = [train_tasks[int(i)] for i in idx]
                x = x_uniq[task_rows[idx]]
                probs = policy.probabilities_from_features(x)
                actions = sample_actions(probs, cfg.samples_per_task, rng)
                scores: list[list[RouteScores]] = [
                    [score_completion(t, texts[int(a)], pool_ids) for a in row]
                    for t, row in zip(tasks, actions, strict=True)
                ]
                rewards = np.asarray([[s.weighted(weights_5) for s in row] for row in scores])
                adv = group_advantages(rewards, cfg.adv_eps)
                grad_w, grad_b = policy_gradient(x, probs, actions, adv)
                grad_norm = clip_grad_norm(grad_w, grad_b, cfg.max_grad_norm)
                opt.step(policy.weights, policy.bias, grad_w, grad_b)
                step_times.append(time.perf_counter() - t0)

                flat = [s for row in scores for s in row]
                n = len(flat)
                entropy = float(-(probs * np.log(np.clip(probs, 1e-12, None))).sum(axis=1).mean())
                held = (
                    _greedy_eval(policy, eval_tasks, x_eval)
                    if step % eval_every == 0 or step == cfg.steps
                    else {}
                )
                record = StepMetrics(
                    step=step,
                    reward=_r(rewards.mean()),
                    routed_reward=_r(sum(s.routed_reward for s in flat) / n),
                    chose_oracle=_r(sum(s.chose_oracle for s in flat) / n),
                    resolved_if_chosen=_r(sum(s.resolved_if_chosen for s in flat) / n),
                    cost_if_chosen=_r(sum(s.cost_if_chosen for s in flat) / n),
                    entropy=_r(entropy),
                    groups_with_signal=_r(float((rewards.std(axis=1) > 0).mean())),
                    grad_norm=_r(grad_norm),
                    route_share={m: _r(float((actions == j).mean())) for j, m in enumerate(pool_ids)},
                    **held,
                )
                mfh.write(record.to_line())
                mfh.flush()
                bar.set_postfix(reward=f"{record.reward:.3f}", entropy=f"{entropy:.3f}", refresh=False)
            bar.close()
        save_checkpoint(checkpoint_of(policy, cfg, table_name, cfg.steps), staged / CHECKPOINT_FILE)
        summary = heldout_summary(eval_tasks, pool_ids, policy.route_from_features(x_eval))
        (staged / SUMMARY_FILE).write_text(
            json.dumps(summary.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8"
        )
    return LocalTrainResult(
        checkpoint_path=out / CHECKPOINT_FILE,
        metrics_path=out / METRICS_FILE,
        summary_path=out / SUMMARY_FILE,
        summary=summary,
        steps=cfg.steps,
        train_tasks=len(train_tasks),
        wall_seconds=time.perf_counter() - start,
        seconds_per_step=sum(step_times) / len(step_times),
    )
