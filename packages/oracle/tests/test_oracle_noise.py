"""Rollout noise: run-to-run disagreement, the three-class fit, the noise-only pool, and the estimate on
synthetic tables whose truth is known (one model copied; one model dominating)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from router_oracle.analysis.noise import (
    estimate_noise,
    fit_classes,
    headroom_sentence,
    noise_only_pool,
    with_rollouts,
)
from router_oracle.analysis.run_agreement import compare_runs, measure_models
from router_oracle.build import build_table
from router_oracle.infra.errors import OracleInputError
from router_oracle.table import (
    ModelOutcome,
    OracleRule,
    OracleTable,
    Pool,
    PoolModel,
    RunOutcome,
    TaskRecord,
)
from router_oracle.tie_rule import pick_for_task

RULE = OracleRule()


def make_table(runs: Mapping[str, Sequence[Sequence[bool]]], cost: Mapping[str, float]) -> OracleTable:
    """A table from resolved flags: `runs[model][k][task]` is run k of `model` on task `task`."""
    pool = Pool(
        name="synthetic",
        models=[
            PoolModel(id=m, name=m, runs=[f"{m}-run{k}" for k in range(len(rs))]) for m, rs in runs.items()
        ],
    )
    n = len(next(iter(runs.values()))[0])
    tasks = []
    # Tasks with the same flags are the same row but for the id: each distinct row is built (and picked)
    # once, then copied under each task's id.
    rows: dict[tuple[tuple[bool, ...], ...], TaskRecord] = {}
    for i in range(n):
        flags = tuple(tuple(r[i] for r in rs) for rs in runs.values())
        row = rows.get(flags)
        if row is None:
            per_model = {}
            for m, rs in runs.items():
                outcomes = [
                    RunOutcome(run=f"{m}-run{k}", resolved=r[i], cost=cost[m]) for k, r in enumerate(rs)
                ]
                rate = sum(o.resolved for o in outcomes) / len(outcomes)
                per_model[m] = ModelOutcome(resolve_rate=rate, cost=cost[m], runs=outcomes)
            pick = pick_for_task(pool, RULE, per_model)
            row = rows[flags] = TaskRecord(
                instance_id=f"t{i:05d}",
                repo="o/r",
                difficulty=None,
                problem_statement="",
                per_model=per_model,
                oracle=pick.oracle,
                best=pick.best,
                all_failed=pick.all_failed,
            )
        tasks.append(row.model_copy(update={"instance_id": f"t{i:05d}"}))
    return OracleTable(pool=pool, rule=RULE, sources=[], command="synthetic", tasks=tasks)


# --- measured disagreement -------------------------------------------------------------------------


def test_disagreement_of_a_hand_made_model() -> None:
    # Run A resolves t0, t1; run B resolves t0, t2, t3: A only {t1}, B only {t2, t3}, agree on t0 (and
    # t4, failed by both).
    a = [True, True, False, False, False]
    b = [True, False, True, True, False]
    table = make_table({"m": [a, b], "solo": [[True] * 5]}, {"m": 1.0, "solo": 1.0})
    [m] = measure_models(table, "table")  # `solo` has one run: not measured
    [pair] = m.pairs
    assert (pair.a_only, pair.b_only) == (1, 2)
    assert (pair.resolved_a, pair.resolved_b) == (0.4, 0.6)
    assert pair.disagreement == 0.6 and pair.either == 0.8
    assert m.resolve_rate == 0.5 and m.disagreement == 0.6
    assert m.level_shift == 0.2 and m.noise_disagreement == 0.4  # 2 * min(1, 2) / 5
    assert compare_runs("x", "y", a, b) == pair.model_copy(update={"run_a": "x", "run_b": "y"})


def test_three_runs_are_compared_pairwise() -> None:
    r0, r1, r2 = [True, False], [False, False], [True, True]
    [m] = measure_models(make_table({"m": [r0, r1, r2]}, {"m": 1.0}), "table")
    assert [(p.run_a, p.run_b) for p in m.pairs] == [("m-run0", "m-run1"), ("m-run0", "m-run2"),
                                                      ("m-run1", "m-run2")]  # fmt: skip
    assert [p.disagreement for p in m.pairs] == [0.5, 0.5, 1.0]
    assert m.disagreement == pytest.approx(2 / 3, abs=1e-6)


def test_bundled_pairs_match_the_issue() -> None:
    """The issue's table: GPT-5.2 (high) 12.2% (28 / 33), Claude Opus 4.5 10.0% (19 / 31), DeepSeek V3.2
    20.0% (25 / 75), each pair's oracle +5.6 / +3.8 / +5.0 points above its better run."""
    est = estimate_noise(build_table("bash-only"))
    got = {m.id: m.pairs[0] for m in est.measured}
    for model, d, a_only, b_only, gain in [
        ("gpt-5.2-high", 0.122, 28, 33, 5.6),
        ("claude-opus-4.5", 0.100, 19, 31, 3.8),
        ("deepseek-v3.2", 0.200, 25, 75, 5.0),
    ]:
        p = got[model]
        assert (p.disagreement, p.a_only, p.b_only) == (d, a_only, b_only)
        assert round(100 * (p.either - max(p.resolved_a, p.resolved_b)), 1) == gain


# --- the three-class fit and the noise-only pool ----------------------------------------------------


@given(st.floats(0, 1), st.floats(0, 1))
def test_fit_reproduces_rate_and_disagreement(r: float, d: float) -> None:
    c = fit_classes(r, d)
    assert min(c.never, c.coin_flip, c.always) >= 0
    assert c.never + c.coin_flip + c.always == pytest.approx(1, abs=1e-9)
    assert c.always + c.coin_flip * c.coin_flip_p == pytest.approx(r, abs=1e-9)
    p = c.coin_flip_p
    assert 2 * c.coin_flip * p * (1 - p) == pytest.approx(min(d, 2 * r * (1 - r)), abs=1e-9)


def test_noise_only_pool_by_hand() -> None:
    coin = fit_classes(0.5, 0.2)  # never 0.3, coin flip 0.4 (p = 1/2), always 0.3
    assert (coin.never, coin.coin_flip, coin.coin_flip_p) == pytest.approx((0.3, 0.4, 0.5))
    # Alone, a model's labels are what its p promises: no luck.
    assert noise_only_pool([coin], [1]) == pytest.approx((0.5, 0.5))
    # Three single-run copies: on the coin-flip tasks the oracle wins 1 - 1/8, the best p 1/2.
    oracle, best = noise_only_pool([coin] * 3, [1, 1, 1])
    assert best == pytest.approx(0.5)
    assert oracle == pytest.approx(0.3 + 0.4 * (1 - 0.5**3))
    # Two copies with two runs each: labels 0, 1/2, 1 with 1/4, 1/2, 1/4; E[max] = 1/2 * 3/8 + 7/16.
    # P(max <= 0) = 1/16, P(max <= 1/2) = 9/16: E[max] = 1/2 * 8/16 + 1 * 7/16 = 11/16.
    oracle, _ = noise_only_pool([coin] * 2, [2, 2])
    assert oracle == pytest.approx(0.3 + 0.4 * 11 / 16)


# --- the estimate on synthetic tables ----------------------------------------------------------------


def _exact_runs(types: Sequence[tuple[int, int]], q: int, slots: int) -> list[list[bool]]:
    """`slots` rollouts of one model on tasks with success probability a/q, for (a, weight) in `types`,
    with no sampling error: per type, weight x q**slots tasks that enumerate every combination of
    outcomes in the proportions the probability gives (rollout j succeeds when digit j < a)."""
    out: list[list[bool]] = [[] for _ in range(slots)]
    for a, weight in types:
        for _ in range(weight):
            for digits in itertools.product(range(q), repeat=slots):
                for j, dgt in enumerate(digits):
                    out[j].append(dgt < a)
    return out


def _same_model_case(
    types: Sequence[tuple[int, int]], q: int, copies: int, runs: int
) -> tuple[float, float, float]:
    """(headroom, estimate, upper estimate) in points for `copies` copies of one model, `runs` rollouts
    each, on an exact synthetic table (see `_exact_runs`). With one run per copy, the disagreement is
    measured on an exact table of two runs of the same model."""
    rollouts = _exact_runs(types, q, copies * runs)
    table = make_table(
        {f"m{k}": rollouts[k * runs : (k + 1) * runs] for k in range(copies)},
        {f"m{k}": 1.0 for k in range(copies)},
    )
    measured = measure_models(make_table({"same": _exact_runs(types, q, 2)}, {"same": 1.0}), "table")
    est = estimate_noise(table, measured=measured if runs == 1 else None)
    assert est.headroom_points is not None and est.noise is not None and est.upper is not None
    assert est.noise == est.upper  # exact runs: no level shift between them
    return est.headroom_points, est.noise.noise_points, est.upper.noise_points


_types = st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3)), min_size=1, max_size=4)


@settings(max_examples=25, deadline=None)
@given(
    q=st.integers(2, 10),
    types=st.lists(st.tuples(st.integers(0, 10), st.integers(1, 3)), min_size=1, max_size=3),
)
def test_two_copies_of_one_model_noise_is_the_whole_headroom(q, types) -> None:
    """Two single-run copies of one model, any per-task probabilities: every point of headroom is luck,
    and the three-class fit is exact here (the expected gain is mean p(1-p) = d / 2)."""
    headroom, noise, _ = _same_model_case([(min(a, q), w) for a, w in types], q, copies=2, runs=1)
    assert noise == pytest.approx(headroom, abs=1e-3)


@settings(max_examples=20, deadline=None)
@given(
    types=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3)), min_size=1, max_size=3),
    copies=st.integers(2, 4),
    runs=st.integers(1, 2),
)
def test_copies_of_one_model_in_the_fitted_family(types, copies, runs) -> None:
    """Tasks never / half the time / always solved (the fit's own family): any number of copies, one or
    two runs each, the estimate is the whole headroom."""
    headroom, noise, _ = _same_model_case(types, 2, copies=copies, runs=runs)
    assert noise == pytest.approx(headroom, abs=1e-3)


@settings(max_examples=20, deadline=None)
@given(types=_types, shape=st.sampled_from([(3, 1), (2, 2)]))
def test_copies_of_one_model_any_shape(types, shape) -> None:
    """Probabilities in quarters (0, 1/4, ..., 1) and three single-run copies, or two copies with two runs:
    beyond two single runs the fit extrapolates, so the estimate is close to the whole headroom rather
    than equal to it (within a quarter of it)."""
    copies, runs = shape
    headroom, noise, _ = _same_model_case(types, 4, copies=copies, runs=runs)
    assert abs(noise - headroom) <= headroom / 4 + 1e-3


@settings(max_examples=40, deadline=None)
@given(
    outcomes=st.lists(st.lists(st.booleans(), min_size=30, max_size=30), min_size=2, max_size=4),
    runs=st.integers(2, 3),
)
def test_no_noise_no_luck(outcomes, runs) -> None:
    """Runs that always agree: whatever the models' complementarity, nothing is luck."""
    table = make_table(
        {f"m{k}": [o] * runs for k, o in enumerate(outcomes)}, {f"m{k}": 1.0 for k in range(len(outcomes))}
    )
    est = estimate_noise(table)
    assert est.noise is not None and est.upper is not None
    assert est.noise.noise_points == 0 and est.upper.noise_points == 0


@settings(max_examples=30, deadline=None)
@given(
    solved=st.integers(1, 4),
    failed=st.integers(0, 3),
    others=st.lists(st.integers(0, 2), min_size=1, max_size=2),
)
def test_one_noise_free_model_dominates(solved, failed, others) -> None:
    """Model `a` (both runs agree) resolves every task any model resolves, and costs least; the weaker
    models succeed with probability a/4 <= 1/2 on a's tasks (exact synthetic runs, see `_exact_runs`).
    The oracle is `a` itself, there is no headroom, and however noisy the weaker models are, the
    estimate is zero."""
    slots = 2 * len(others)
    combos = list(itertools.product(range(4), repeat=slots))
    n_solved, n_failed = solved * len(combos), failed * len(combos)
    a_flags = [True] * n_solved + [False] * n_failed
    runs: dict[str, list[list[bool]]] = {"a": [a_flags, a_flags]}
    for k, level in enumerate(others):
        runs[f"b{k}"] = [
            [combo[2 * k + j] < level for _ in range(solved) for combo in combos] + [False] * n_failed
            for j in range(2)
        ]
    table = make_table(runs, {"a": 0.1, **{f"b{k}": 1.0 for k in range(len(others))}})
    est = estimate_noise(table)
    assert est.headroom_points == 0
    assert est.noise is not None and est.upper is not None
    assert est.noise.noise_points == pytest.approx(0, abs=1e-3)
    assert est.upper.noise_points == pytest.approx(0, abs=1e-3)


# --- table-level behaviour ---------------------------------------------------------------------------


def test_single_run_user_table_says_noise_is_not_measured() -> None:
    table = make_table({"a": [[True, False]], "b": [[False, True]]}, {"a": 1.0, "b": 2.0})
    est = estimate_noise(table)
    assert est.noise is None and est.upper is None and est.models == [] and est.measured == []
    assert est.unavailable is not None and "not measured" in est.unavailable
    assert headroom_sentence(est).endswith("rollout noise not measured (no model run twice)")


def test_subset_of_tasks_and_the_sentence() -> None:
    table = build_table("bash-only")
    ids = [t.instance_id for t in table.tasks[::5]]
    est = estimate_noise(table, ids)
    assert est.tasks == 100
    rate = math.fsum(table.task(i).per_model[table.task(i).oracle].resolve_rate for i in ids) / 100
    assert est.oracle_resolve_rate == round(rate, 6)
    # the disagreement is measured on all of the table's tasks, the rates on the subset
    assert [m.tasks for m in est.measured] == [500] * 5
    assert est.models[0].resolve_rate == round(
        math.fsum(table.task(i).per_model["claude-opus-4.6"].resolve_rate for i in ids) / 100, 6
    )
    sentence = headroom_sentence(est)
    assert sentence.startswith(f"oracle {est.headroom_points:+.1f} points above the mix, of which about ")
    assert sentence.endswith("expected from rollout noise alone")
    with pytest.raises(OracleInputError, match="'nope' is not in the table"):
        estimate_noise(table, ["nope"])


def test_default_pool_figures() -> None:
    """The figures the README quotes (`router-oracle stats` on the default pool)."""
    est = estimate_noise(build_table("bash-only"))
    assert est.headroom_points == pytest.approx(11.3, abs=0.05)
    assert est.noise is not None and est.upper is not None
    assert (round(est.noise.noise_points, 1), round(est.upper.noise_points, 1)) == (5.7, 7.1)
    assert [(m.measured_as, m.match) for m in est.models] == [
        ("claude-opus-4.5", "closest resolve rate"),
        ("gpt-5.2-high", "same run"),
        ("claude-sonnet-4.5", "closest resolve rate"),
    ]
    # deterministic: the same table gives the same bytes
    again = estimate_noise(build_table("bash-only"))
    assert json.dumps(again.model_dump(mode="json")) == json.dumps(est.model_dump(mode="json"))


def test_multi_run_pool_uses_its_own_runs() -> None:
    est = estimate_noise(build_table("multi_run"))
    assert [(m.match, m.measured_source, m.runs) for m in est.models] == [("own runs", "table", 2)] * 3
    assert [m.source for m in est.measured] == ["table"] * 3 + ["bundled"] * 2


def test_more_rollouts_make_the_labels_cleaner() -> None:
    est = estimate_noise(build_table("bash-only"))
    assert est.noise is not None and est.upper is not None
    assert with_rollouts(est, 1) == (est.noise, est.upper)  # the default pool has one run per model
    lows = [with_rollouts(est, r)[0].noise_points for r in (1, 2, 4, 8)]
    assert lows == sorted(lows, reverse=True) and lows[-1] < lows[0] / 2
    with pytest.raises(ValueError, match="rollouts >= 1"):
        with_rollouts(est, 0)
