"""Every evaluation metric and the mix frontier on hand-made tasks whose answers are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from router_oracle.frontier import (
    ModelPoint,
    best_mix_at_cost,
    cheapest_mix_at_resolved,
    frontier_vertices,
)
from router_oracle.table import ModelOutcome, OracleRule, Pool, PoolModel, RunOutcome, TaskRecord
from router_oracle.tie_rule import pick_for_task
from router_train.scoring.bootstrap import TaskResample
from router_train.scoring.decisions import UNPARSEABLE, from_distributions, from_labels
from router_train.scoring.metrics import (
    cohen_kappa,
    compute_metrics,
    single_model_points,
    total_variation,
)
from router_train.scoring.vs_mix import frontier_position, mix_resolved_at_cost

IDS = ["a", "b", "c"]
POOL = Pool(name="t", models=[PoolModel(id=i, name=i, runs=[f"run-{i}"]) for i in IDS])


def rec(iid: str, runs: dict[str, list[tuple[bool, float]]]) -> TaskRecord:
    """A task from per-model runs (resolved, cost); oracle/best/all_failed by the oracle package's rule."""
    per_model = {
        m: ModelOutcome(
            resolve_rate=sum(r for r, _ in rs) / len(rs),
            cost=sum(c for _, c in rs) / len(rs),
            runs=[RunOutcome(run=f"run-{m}-{k}", resolved=r, cost=c) for k, (r, c) in enumerate(rs)],
        )
        for m, rs in runs.items()
    }
    pick = pick_for_task(POOL, OracleRule(), per_model)
    return TaskRecord(
        instance_id=iid,
        repo="o/r",
        difficulty=None,
        problem_statement="x",
        per_model=per_model,
        oracle=pick.oracle,
        best=pick.best,
        all_failed=all(o.resolve_rate == 0 for o in per_model.values()),
    )


def one(m_resolved: dict[str, bool], costs: dict[str, float], iid: str) -> TaskRecord:
    return rec(iid, {m: [(m_resolved[m], costs[m])] for m in IDS})


COSTS = {"a": 1.0, "b": 0.5, "c": 0.1}
# t1: all resolve -> oracle c.  t2: only a resolves -> oracle a.  t3: none -> oracle c (cheapest).
# t4: a and b resolve -> oracle b.
TASKS = [
    one({"a": True, "b": True, "c": True}, COSTS, "t1"),
    one({"a": True, "b": False, "c": False}, COSTS, "t2"),
    one({"a": False, "b": False, "c": False}, COSTS, "t3"),
    one({"a": True, "b": True, "c": False}, COSTS, "t4"),
]


def test_hand_built_tasks_have_the_expected_oracles() -> None:
    assert [t.oracle for t in TASKS] == ["c", "a", "c", "b"]
    assert [t.all_failed for t in TASKS] == [False, False, True, False]


def test_resolved_cost_accuracy_opt_sel_by_hand() -> None:
    d = from_labels("r", "baseline", {"t1": ["a"], "t2": ["a"], "t3": ["b"], "t4": ["c"]})
    m = compute_metrics(d, TASKS)
    assert m.resolved_rate == 0.5  # t1 yes, t2 yes, t3 no, t4 no
    assert m.resolved_tasks == 2.0
    assert m.mean_cost == pytest.approx((1 + 1 + 0.5 + 0.1) / 4)
    assert m.total_cost == pytest.approx(2.6)
    assert m.resolved_per_dollar == pytest.approx(2 / 2.6, abs=1e-6)
    assert m.accuracy == 0.25  # only t2
    assert m.in_best_rate == 0.75  # t1 (a ties for best), t2, t3 (all failed: every model ties)
    # Opt.Sel over the 3 solvable tasks (t1, t2, t4): only t2 picked the cheapest model that resolved.
    assert m.opt_sel_tasks == 3
    assert m.opt_sel == pytest.approx(1 / 3, abs=1e-6)
    assert m.mean_reward == 0.25  # env reward: 1 for the oracle, 0 otherwise
    assert m.unparseable_rate == 0.0
    assert m.confusion == {"a": {"a": 1.0}, "b": {"c": 1.0}, "c": {"a": 1.0, "b": 1.0}}


def test_opt_sel_is_none_when_every_task_failed() -> None:
    d = from_labels("r", "baseline", {"t3": ["c"]})
    m = compute_metrics(d, [TASKS[2]])
    assert m.opt_sel is None and m.opt_sel_tasks == 0
    assert m.accuracy == 1.0  # accuracy still counts the all-failed task (oracle = cheapest)


def test_opt_sel_with_multi_run_rates_uses_best_rate_then_cheapest() -> None:
    # a resolves 2/2 at 1.0, b 1/2 at 0.2, c 0/2: the oracle is a (best rate), not the cheaper b.
    t = rec(
        "m1", {"a": [(True, 1.0), (True, 1.0)], "b": [(True, 0.2), (False, 0.2)], "c": [(False, 0.1)] * 2}
    )
    assert t.oracle == "a"
    m_b = compute_metrics(from_labels("r", "baseline", {"m1": ["b"]}), [t])
    assert m_b.resolved_rate == 0.5 and m_b.opt_sel == 0.0
    m_a = compute_metrics(from_labels("r", "baseline", {"m1": ["a"]}), [t])
    assert m_a.resolved_rate == 1.0 and m_a.opt_sel == 1.0


def test_unparseable_and_missing_resolve_nothing_cost_nothing_and_are_reported() -> None:
    d = from_labels("r", "traces", {"t1": [None, "c"], "t2": ["a", "a"]})  # t3, t4 missing
    m = compute_metrics(d, TASKS)
    assert m.tasks_missing == 2
    assert m.n_decisions == 4
    # t1: half unparseable (0) and half c (resolved, 0.1); t2: a (resolved, 1.0).
    assert m.resolved_rate == pytest.approx((0.5 + 1.0) / 4)
    assert m.mean_cost == pytest.approx((0.05 + 1.0) / 4)
    assert m.unparseable_rate == pytest.approx((0.5 + 0 + 1 + 1) / 4)
    assert m.label_distribution[UNPARSEABLE] == pytest.approx(2.5 / 4)
    # t1: half no-route (-1), half the oracle c (+1); t2: the oracle a (+1); t3, t4 missing (-1).
    assert m.mean_reward == pytest.approx((0.5 * -1 + 0.5 * 1 + 1 - 1 - 1) / 4)


def test_samples_weigh_each_task_equally() -> None:
    d = from_labels("r", "traces", {"t1": ["c"] * 7 + ["a"], "t2": ["a"]})
    m = compute_metrics(d, TASKS[:2])
    assert m.accuracy == pytest.approx((7 / 8 + 1) / 2)
    assert m.mean_cost == pytest.approx(((7 * 0.1 + 1.0) / 8 + 1.0) / 2)


def test_kappa_matches_sklearn_on_deterministic_labels() -> None:
    tasks = [one({"a": i % 3 == 0, "b": i % 2 == 0, "c": i % 5 == 0}, COSTS, f"k{i}") for i in range(30)]
    labels = [IDS[(i * 7) % 3] if i % 4 else t.oracle for i, t in enumerate(tasks)]
    d = from_labels("r", "baseline", {t.instance_id: [lab] for t, lab in zip(tasks, labels, strict=True)})
    m = compute_metrics(d, tasks)
    want = cohen_kappa_score([t.oracle for t in tasks], labels)
    assert m.kappa == pytest.approx(want, abs=1e-6)


def test_kappa_edge_cases() -> None:
    assert cohen_kappa(1.0, {"a": 1.0}, {"a": 1.0}) == 1.0  # both constant and equal
    assert cohen_kappa(0.5, {"a": 1.0}, {"a": 0.5, "b": 0.5}) == 0.0  # constant router: chance level
    assert cohen_kappa(0.0, {"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5}) == -1.0  # always disagrees
    oracle = compute_metrics(from_labels("o", "baseline", {t.instance_id: [t.oracle] for t in TASKS}), TASKS)
    assert oracle.kappa == 1.0 and oracle.tvd == 0.0 and oracle.accuracy == 1.0 and oracle.opt_sel == 1.0


def test_total_variation() -> None:
    assert total_variation({"a": 1.0}, {"a": 1.0}) == 0.0
    assert total_variation({"a": 1.0}, {"b": 1.0}) == 1.0
    assert total_variation({"a": 0.5, "b": 0.5}, {"a": 0.25, "b": 0.25, "c": 0.5}) == pytest.approx(0.5)
    # An unparseable share counts as a label the oracle never uses.
    d = from_labels("r", "baseline", {t.instance_id: [None] for t in TASKS})
    assert compute_metrics(d, TASKS).tvd == 1.0


def test_expected_random_is_the_mean_of_the_single_models() -> None:
    d = from_distributions("rand", "baseline", {t.instance_id: dict.fromkeys(IDS, 1.0) for t in TASKS})
    m = compute_metrics(d, TASKS)
    pts = single_model_points(TASKS, IDS)
    assert m.resolved_rate == pytest.approx(sum(p.resolved for p in pts) / 3, abs=1e-6)
    assert m.mean_cost == pytest.approx(sum(p.cost for p in pts) / 3, abs=1e-6)
    assert m.accuracy == pytest.approx(1 / 3, abs=1e-6)


P = [
    ModelPoint(model="cheap", cost=0.1, resolved=0.5),
    ModelPoint(model="mid", cost=0.5, resolved=0.6),  # below the cheap-best segment: not on the hull
    ModelPoint(model="best", cost=1.0, resolved=0.8),
    ModelPoint(model="waste", cost=2.0, resolved=0.7),  # past the best model: never worth it
]


def test_frontier_vertices_are_the_upper_hull_up_to_the_best_model() -> None:
    assert [p.model for p in frontier_vertices(P)] == ["cheap", "best"]
    assert [p.model for p in frontier_vertices([*P, ModelPoint(model="knee", cost=0.3, resolved=0.75)])] == [
        "cheap",
        "knee",
        "best",
    ]
    assert frontier_vertices([]) == []


def test_best_mix_at_cost() -> None:
    mix = best_mix_at_cost(P, 0.55)
    assert mix is not None
    assert mix.weights == pytest.approx({"best": 0.5, "cheap": 0.5})
    assert mix.resolved == pytest.approx(0.65) and mix.cost == pytest.approx(0.55)
    assert best_mix_at_cost(P, 0.05) is None  # cheaper than every model
    top = best_mix_at_cost(P, 5.0)
    assert top is not None and top.weights == {"best": 1.0}  # spending more buys nothing


def test_cheapest_mix_at_resolved() -> None:
    mix = cheapest_mix_at_resolved(P, 0.65)
    assert mix is not None and mix.cost == pytest.approx(0.55)
    assert cheapest_mix_at_resolved(P, 0.9) is None
    low = cheapest_mix_at_resolved(P, 0.2)
    assert low is not None and low.weights == {"cheap": 1.0}


def test_frontier_position_gap_and_domination() -> None:
    # Single models here: a (1.0, 0.75), b (0.5, 0.5), c (0.1, 0.25) over TASKS.
    pts = single_model_points(TASKS, IDS)
    assert [(p.cost, p.resolved) for p in pts] == [(1.0, 0.75), (0.5, 0.5), (0.1, 0.25)]
    oracle = compute_metrics(
        from_labels("o", "baseline", {t.instance_id: [t.oracle] for t in TASKS}), TASKS, pts
    )
    assert oracle.frontier is not None and oracle.frontier.dominated is False
    assert oracle.frontier.gap_vs_mix is not None and oracle.frontier.gap_vs_mix > 0
    always_b = compute_metrics(
        from_labels("b", "baseline", {t.instance_id: ["b"] for t in TASKS}), TASKS, pts
    )
    assert always_b.frontier is not None  # b is itself a hull corner: on the frontier, not dominated
    assert always_b.frontier.dominated is False and always_b.frontier.gap_vs_mix == 0.0
    nothing = compute_metrics(from_labels("n", "traces", {t.instance_id: [None] for t in TASKS}), TASKS, pts)
    assert nothing.frontier is not None and nothing.frontier.dominated is None  # costs less than any model


def test_a_point_below_the_hull_is_dominated_by_a_two_model_mix() -> None:
    pos = frontier_position(0.5, 0.6, P)  # "mid": the cheap-best mix at 0.5 resolves 0.5 + 0.4/0.9 * 0.3
    assert pos.dominated is True
    assert pos.gap_vs_mix == pytest.approx(0.6 - (0.5 + 0.4 / 0.9 * 0.3), abs=1e-6)
    assert pos.mix_at_same_cost is not None and set(pos.mix_at_same_cost.weights) == {"cheap", "best"}
    # The cheapest mix resolving 0.6: cheap-best at 1/3 weight on best costs 0.1 + 0.9/3 = 0.4 < 0.5.
    assert pos.saving_vs_mix == pytest.approx(0.4 - 0.5, abs=1e-6)


def test_vectorised_frontier_matches_the_reference() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        pts = [
            ModelPoint(model=f"m{i}", cost=float(c), resolved=float(r))
            for i, (c, r) in enumerate(rng.random((4, 2)))
        ]
        budgets = rng.random(20) * 1.2
        got = mix_resolved_at_cost(
            np.array([[p.resolved] * 20 for p in pts]), np.array([[p.cost] * 20 for p in pts]), budgets
        )
        for b, g in zip(budgets, got, strict=True):
            ref = best_mix_at_cost(pts, float(b))
            assert (ref is None and g == -np.inf) or (
                ref is not None and g == pytest.approx(ref.resolved, abs=1e-5)
            )


def test_bootstrap_interval_is_seeded_and_brackets_the_gap() -> None:
    tasks = [one({"a": i % 2 == 0, "b": i % 3 == 0, "c": i % 5 == 0}, COSTS, f"b{i}") for i in range(40)]
    pts = single_model_points(tasks, IDS)
    outcomes = [[(t.per_model[m].resolve_rate, t.per_model[m].cost) for t in tasks] for m in IDS]
    mr = np.array([[o[0] for o in row] for row in outcomes])
    mc = np.array([[o[1] for o in row] for row in outcomes])
    oracle = from_labels("o", "baseline", {t.instance_id: [t.oracle] for t in tasks})
    m1 = compute_metrics(oracle, tasks, pts, TaskResample(mr, mc, seed=1))
    m2 = compute_metrics(oracle, tasks, pts, TaskResample(mr, mc, seed=1))
    assert m1 == m2 and m1.frontier is not None and m1.frontier.gap_ci is not None
    lo, hi = m1.frontier.gap_ci
    assert m1.frontier.gap_vs_mix is not None and lo <= m1.frontier.gap_vs_mix <= hi
    assert lo > 0  # the oracle beats every mix on these tasks
    # Always the cheapest model: on every resample it is the only mix that cheap, so the gap is 0.
    always_c = from_labels("c", "baseline", {t.instance_id: ["c"] for t in tasks})
    fa = compute_metrics(always_c, tasks, pts, TaskResample(mr, mc, seed=1)).frontier
    assert fa is not None and fa.gap_ci == (0.0, 0.0)


def test_bootstrap_mix_matches_the_frontier_definition() -> None:
    # The bootstrap's vectorised best mix must be frontier.best_mix_at_cost, budget by budget.
    rng = np.random.default_rng(7)
    for _ in range(200):
        m = int(rng.integers(1, 5))
        costs = rng.choice([0.1, 0.2, 0.5, 1.0, 1.5], size=m) * rng.uniform(0.5, 1.5)
        rates = rng.uniform(0, 1, size=m).round(2)
        points = [
            ModelPoint(model=f"m{i}", cost=float(c), resolved=float(r))
            for i, (c, r) in enumerate(zip(costs, rates, strict=True))
        ]
        budgets = np.concatenate([costs, rng.uniform(0, 2, size=8)])
        vec = mix_resolved_at_cost(rates[:, None], costs[:, None], budgets)
        for b, v in zip(budgets, vec, strict=True):
            mix = best_mix_at_cost(points, float(b))
            assert (v == -np.inf) if mix is None else abs(v - mix.resolved) < 1e-9, (points, b, v, mix)
