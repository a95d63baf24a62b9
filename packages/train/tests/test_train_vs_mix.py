"""The vs-mix gap (`router_train.scoring.vs_mix`) on hand-made single models whose answers are worked out
by hand: the gap at a point, its paired bootstrap interval, the points, the verdict words, the curve area."""

from __future__ import annotations

import numpy as np
import pytest

from router_oracle.frontier import ModelPoint, best_mix_at_cost
from router_train.scoring.bootstrap import TaskResample
from router_train.scoring.vs_mix import (
    Gap,
    area_vs_mix,
    floored_gap,
    frontier_position,
    gap_at_cost,
    gap_in_points,
    gap_interval,
    gap_samples,
    mix_on_grid,
    points,
    verdict,
)

# Two hull corners and a model below the segment between them.
CHEAP = ModelPoint(model="cheap", cost=0.1, resolved=0.5)
DEAR = ModelPoint(model="dear", cost=1.0, resolved=0.9)
BELOW = ModelPoint(model="below", cost=0.55, resolved=0.6)  # the mix at 0.55 resolves 0.7
SINGLES = [CHEAP, DEAR, BELOW]


def test_a_point_on_the_frontier_reads_zero() -> None:
    for model in (CHEAP, DEAR):  # a hull corner: the model itself is the best mix at its cost
        pos = frontier_position(model.cost, model.resolved, SINGLES)
        assert pos.gap_vs_mix == 0.0 and pos.dominated is False
        assert pos.mix_at_same_cost is not None and pos.mix_at_same_cost.weights == {model.model: 1.0}
    # Halfway along the hull's segment: a coin between cheap and dear, exactly on the frontier.
    pos = frontier_position(0.55, 0.7, SINGLES)
    assert pos.gap_vs_mix == pytest.approx(0.0, abs=1e-9) and pos.dominated is False
    assert pos.mix_at_same_cost is not None and pos.mix_at_same_cost.weights == {"cheap": 0.5, "dear": 0.5}
    assert verdict(gap_in_points(pos.gap_vs_mix, (0.0, 0.0), [])) == "on the frontier"


def test_a_known_point_above_the_hull_gives_the_hand_computed_gap() -> None:
    # At $0.40 the best mix puts (0.40 - 0.10) / 0.90 = 1/3 on dear: 0.5 + 0.4 / 3 = 0.63333 resolved.
    assert gap_at_cost(0.7, 0.4, SINGLES) == pytest.approx(0.7 - (0.5 + 0.4 / 3), abs=1e-12)
    pos = frontier_position(0.4, 0.7, SINGLES)
    assert pos.gap_vs_mix == 0.066667  # rounded to the reports' six decimals
    assert pos.dominated is False
    assert pos.mix_at_same_cost is not None
    assert pos.mix_at_same_cost.weights == {"cheap": 0.666667, "dear": 0.333333}
    # The cheapest mix resolving 0.7 is the coin at $0.55: the router saves $0.15 a task.
    assert pos.saving_vs_mix == pytest.approx(0.15, abs=1e-6)
    assert points(gap_at_cost(0.7, 0.4, SINGLES)) == 6.6667


def test_below_the_hull_is_dominated_and_cheaper_than_every_model_has_no_gap() -> None:
    pos = frontier_position(BELOW.cost, BELOW.resolved, SINGLES)
    assert pos.gap_vs_mix == pytest.approx(-0.1, abs=1e-6) and pos.dominated is True
    assert gap_at_cost(0.6, 0.05, SINGLES) is None
    none = frontier_position(0.05, 0.6, SINGLES)
    assert none.gap_vs_mix is None and none.dominated is None and none.gap_ci is None
    # Floored: compared with the cheapest model instead, with no credit for the saving.
    assert floored_gap(0.6, 0.05, SINGLES) == (pytest.approx(0.1), True)
    # Where a mix exists it is the plain gap, rounded as the reports round it.
    assert floored_gap(0.7, 0.4, SINGLES) == (0.066667, False)


def _tasks(n: int = 300, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """(models, tasks) resolved and cost of cheap (about 50%, $0.1), dear (90%, $1.0), below (40%, $0.6)."""
    rng = np.random.default_rng(seed)
    resolved = np.vstack([rng.random(n) < p for p in (0.5, 0.9, 0.4)]).astype(float)
    cost = np.vstack([np.full(n, c) * rng.uniform(0.8, 1.2, n) for c in (0.1, 1.0, 0.6)])
    return resolved, cost


def _gap(resolved: np.ndarray, cost: np.ndarray, r: np.ndarray, c: np.ndarray) -> float | None:
    singles = [
        ModelPoint(model=m, cost=float(cost[i].mean()), resolved=float(resolved[i].mean()))
        for i, m in enumerate(("cheap", "dear", "below"))
    ]
    return gap_at_cost(float(r.mean()), float(c.mean()), singles)


def test_the_interval_contains_the_point_and_follows_the_seed() -> None:
    mr, mc = _tasks()
    rs = TaskResample(mr, mc, seed=0)
    # A router that picks dear where cheap fails and cheap elsewhere: well above every mix.
    pick = np.where(mr[0] > 0, 0, 1)
    cols = np.arange(mr.shape[1])
    r, c = mr[pick, cols], mc[pick, cols]
    gap = _gap(mr, mc, r, c)
    ci = gap_interval(rs, r, c)
    assert gap is not None and ci is not None and ci[0] <= gap <= ci[1] and ci[0] > 0
    assert gap_interval(TaskResample(mr, mc, seed=0), r, c) == ci
    assert gap_interval(TaskResample(mr, mc, seed=1), r, c) != ci
    # The interval is the percentile interval of the per-resample gaps, each against its own frontier.
    samples = gap_samples(rs, r, c)
    assert samples.shape == (1000,) and np.isfinite(samples).all()
    assert ci == pytest.approx(tuple(np.percentile(samples, [2.5, 97.5])))
    for k in (0, 17, 999):
        rows = rs.idx[k]
        assert samples[k] == pytest.approx(_gap(mr[:, rows], mc[:, rows], r[rows], c[rows]), abs=1e-12)


def test_verdicts_of_measured_routers() -> None:
    mr, mc = _tasks()
    rs = TaskResample(mr, mc, seed=0)
    cols = np.arange(mr.shape[1])

    def judged(r: np.ndarray, c: np.ndarray) -> str:
        return verdict(gap_in_points(_gap(mr, mc, r, c), gap_interval(rs, r, c), []))

    smart = np.where(mr[0] > 0, 0, 1)
    assert judged(mr[smart, cols], mc[smart, cols]).startswith("beats mix: +")
    assert judged(mr[2], mc[2]).startswith("dominated: -")  # always the model below the hull
    # Always the cheapest model: on every resample it is the only mix that cheap, so the gap is 0.
    assert judged(mr[0], mc[0]) == "on the frontier"
    assert gap_interval(rs, mr[0], mc[0]) == pytest.approx((0.0, 0.0), abs=1e-12)
    # A coin between the two hull corners lies on the segment between them on every resample.
    coin_r, coin_c = (mr[0] + mr[1]) / 2, (mc[0] + mc[1]) / 2
    assert np.abs(gap_samples(rs, coin_r, coin_c)).max() < 1e-12
    assert judged(coin_r, coin_c) == "on the frontier"
    # Cheaper than every model on most resamples: no interval, and no mix at the point either.
    assert gap_interval(rs, mr[0] * 0, mc[0] * 0) is None
    assert np.isnan(gap_samples(rs, mr[0] * 0, mc[0] * 0)).all()
    assert judged(mr[0] * 0, mc[0] * 0) == "cheaper than every model"


@pytest.mark.parametrize(
    ("mean", "low", "high", "words"),
    [
        (1.0, 0.5, 2.0, "beats mix: +1.0 pts [+0.5, +2.0]"),
        (1.0, 0.06, 2.0, "beats mix: +1.0 pts [+0.1, +2.0]"),
        (1.0, 0.04, 2.0, "~ mix: +1.0 pts [+0.0, +2.0]"),
        (1.0, -0.5, 2.0, "~ mix: +1.0 pts [-0.5, +2.0]"),
        (-1.0, -2.0, 0.5, "~ mix: -1.0 pts [-2.0, +0.5]"),
        (-1.0, -2.0, -0.04, "~ mix: -1.0 pts [-2.0, -0.0]"),
        (-1.0, -2.0, -0.06, "dominated: -1.0 pts [-2.0, -0.1]"),
        (-1.0, -2.0, -0.5, "dominated: -1.0 pts [-2.0, -0.5]"),
    ],
)
def test_verdict_words_switch_where_the_interval_crosses_zero(
    mean: float, low: float, high: float, words: str
) -> None:
    # The words follow the interval (beyond the 0.05 points a one-decimal report can show), not the mean.
    assert verdict(Gap(mean=mean, low=low, high=high)) == words


def test_verdict_without_interval_or_mix_and_with_seeds() -> None:
    assert verdict(Gap(mean=None, low=None, high=None)) == "cheaper than every model"
    assert verdict(Gap(mean=1.23, low=None, high=None)) == "+1.2 pts"
    assert verdict(Gap(mean=1.0, low=0.5, high=2.0, sd=0.34)) == "beats mix: +1.0 pts [+0.5, +2.0] sd 0.3"
    # Near zero but with a wide interval: undecided, not "on the frontier".
    assert verdict(Gap(mean=0.0, low=-1.0, high=1.0)) == "~ mix: +0.0 pts [-1.0, +1.0]"


def test_gap_in_points() -> None:
    gap = gap_in_points(0.0123456, (-0.001, 0.02), [0.01, 0.03, None])
    assert (gap.mean, gap.low, gap.high) == (1.2346, -0.1, 2.0)
    assert gap.by_fold_seed == [1.0, 3.0, None]
    assert gap.sd == pytest.approx(1.4142, abs=1e-4)  # stdev of the seeds with a gap
    assert gap_in_points(None, None, [0.01]) == Gap(mean=None, low=None, high=None, by_fold_seed=[1.0])


def test_mix_on_grid_is_the_frontier_and_the_area_is_the_mean_distance_above_it() -> None:
    grid = np.array([[0.0, 0.1, 0.325, 0.55, 0.775, 1.0, 1.2]])
    mr = np.array([[p.resolved] for p in SINGLES])
    mc = np.array([[p.cost] for p in SINGLES])
    mix = mix_on_grid(mr, mc, grid)
    for g, v in zip(grid[0], mix[0], strict=True):
        ref = best_mix_at_cost(SINGLES, float(g))
        assert (ref is None and v == -np.inf) or (ref is not None and v == pytest.approx(ref.resolved))
    assert mix[0, 1:].tolist() == pytest.approx([0.5, 0.6, 0.7, 0.8, 0.9, 0.9])
    on = mix[:, 1:6]  # the frontier itself over [cheap, dear]: no area
    assert area_vs_mix(on, on).tolist() == [0.0]
    # A bump of 4 points in the middle of three grid costs: trapezoid mean (2 + 2) / 2 = 2 points.
    bump = mix[:, [1, 3, 5]] + np.array([[0.0, 0.04, 0.0]])
    assert area_vs_mix(bump, mix[:, [1, 3, 5]]).tolist() == pytest.approx([2.0])
    # Two samples at once, one 1 point above everywhere, one 3 below.
    two = np.vstack([on[0] + 0.01, on[0] - 0.03])
    assert area_vs_mix(two, np.vstack([on[0], on[0]])).tolist() == pytest.approx([1.0, -3.0])
