"""Property tests pinning down the oracle rule (router_oracle.tie_rule)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from router_oracle.tie_rule import Candidate, pick_oracle

IDS = st.from_regex(r"[a-z][a-z0-9.-]{0,8}", fullmatch=True)
# Rates as fractions over a few rollouts, so exact ties are common, like in real tables.
RATES = st.sampled_from([0.0, 1 / 3, 0.5, 2 / 3, 1.0])
COSTS = st.one_of(
    st.sampled_from([0.0, 0.1, 0.25, 1.0]),
    st.floats(min_value=0, max_value=1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False),
)


@st.composite
def candidates(draw: st.DrawFn, min_size: int = 1) -> list[Candidate]:
    ids = draw(st.lists(IDS, min_size=min_size, max_size=6, unique=True))
    return [Candidate(i, draw(RATES), draw(COSTS)) for i in ids]


@given(candidates())
def test_pick_is_in_argmax_set_and_cheapest_within(cands: list[Candidate]) -> None:
    pick = pick_oracle(cands)
    top = max(c.resolve_rate for c in cands)
    by_id = {c.id: c for c in cands}
    assert pick.best == sorted(c.id for c in cands if c.resolve_rate == top)
    assert pick.oracle in pick.best
    assert by_id[pick.oracle].cost == min(by_id[i].cost for i in pick.best)
    # last resort: smallest id among the cheapest of the best
    cheapest = [i for i in pick.best if by_id[i].cost == by_id[pick.oracle].cost]
    assert pick.oracle == min(cheapest)
    assert pick.id_tiebreak == (len(cheapest) > 1)
    assert pick.all_failed == (top == 0)


@given(candidates(), st.randoms())
def test_pool_permutation_changes_nothing(cands: list[Candidate], rnd) -> None:
    shuffled = list(cands)
    rnd.shuffle(shuffled)
    assert pick_oracle(shuffled) == pick_oracle(cands)


@given(candidates(), IDS, st.data())
def test_adding_a_dominated_model_never_changes_the_pick(cands, new_id, data) -> None:
    """Dominated by some model d: strictly lower rate, or equal rate and strictly higher cost."""
    if new_id in {c.id for c in cands}:
        return
    d = data.draw(st.sampled_from(cands))
    lower = [r for r in (0.0, 1 / 3, 0.5, 2 / 3) if r < d.resolve_rate]
    if lower and data.draw(st.booleans()):
        added = Candidate(new_id, data.draw(st.sampled_from(lower)), data.draw(COSTS))
    else:
        dearer = d.cost + data.draw(st.floats(min_value=1e-3, max_value=10))
        if dearer <= d.cost:
            return
        added = Candidate(new_id, d.resolve_rate, dearer)
    before, after = pick_oracle(cands), pick_oracle([*cands, added])
    assert after.oracle == before.oracle
    if added.resolve_rate < max(c.resolve_rate for c in cands):
        assert after == before
    else:
        assert after.best == sorted([*before.best, new_id])


@given(candidates(), st.integers(min_value=-20, max_value=20))
def test_scaling_all_costs_by_a_power_of_two_changes_nothing(cands, k) -> None:
    # Powers of two scale floats exactly, so the property is about the rule, not rounding.
    scaled = [Candidate(c.id, c.resolve_rate, c.cost * 2.0**k) for c in cands]
    assert pick_oracle(scaled) == pick_oracle(cands)


@given(
    st.lists(IDS, min_size=1, max_size=6, unique=True),
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=6, max_size=6),
    st.integers(min_value=1, max_value=1000),
)
def test_scaling_integer_costs_by_a_positive_integer_changes_nothing(ids, cents, factor) -> None:
    cands = [Candidate(i, 0.0, float(c)) for i, c in zip(ids, cents, strict=False)]
    scaled = [Candidate(c.id, c.resolve_rate, c.cost * factor) for c in cands]
    assert pick_oracle(scaled) == pick_oracle(cands)


@given(candidates())
def test_all_fail_picks_the_cheapest(cands) -> None:
    failed = [Candidate(c.id, 0.0, c.cost) for c in cands]
    pick = pick_oracle(failed)
    cheapest = min(c.cost for c in failed)
    assert pick.oracle == min(c.id for c in failed if c.cost == cheapest)
    assert pick.best == sorted(c.id for c in failed)
    assert pick.all_failed


@given(st.lists(IDS, min_size=1, max_size=6, unique=True), RATES, COSTS)
def test_full_tie_picks_the_smallest_id(ids, rate, cost) -> None:
    pick = pick_oracle([Candidate(i, rate, cost) for i in ids])
    assert pick.oracle == min(ids)
    assert pick.id_tiebreak == (len(ids) > 1)


@settings(max_examples=25)
@given(candidates())
def test_pick_is_deterministic(cands) -> None:
    assert pick_oracle(cands) == pick_oracle(list(cands))


def test_examples() -> None:
    a, b, c = "claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high"
    pick = pick_oracle([Candidate(a, 1.0, 0.4), Candidate(b, 1.0, 0.3), Candidate(c, 0.0, 0.01)])
    assert (pick.oracle, pick.best, pick.id_tiebreak) == (b, [a, b], False)
    assert pick_oracle([Candidate(a, 0.5, 9.0), Candidate(b, 0.0, 0.1)]).oracle == a


def test_bad_candidates() -> None:
    with pytest.raises(ValueError, match="no candidates"):
        pick_oracle([])
    with pytest.raises(ValueError, match="duplicate"):
        pick_oracle([Candidate("a", 1, 1), Candidate("a", 0, 0)])
    with pytest.raises(ValueError, match="non-finite"):
        pick_oracle([Candidate("a", 1, float("nan"))])
