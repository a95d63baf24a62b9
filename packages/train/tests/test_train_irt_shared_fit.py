"""One IRT fit shared by many pools (`irt.shared_fit`): each pool's tolerance is chosen by
`fit_irt_router`'s own rule (bitwise its choice), everything else is the shared fit's; and the fitter's
scoring of it is `IrtFitter`'s."""

from __future__ import annotations

import numpy as np
import pytest

from router_oracle.build import build_table
from router_oracle.derive import CandidateIndex
from router_oracle.results_matrix import ResultsMatrix, load_results_matrix
from router_oracle.table import OracleTable
from router_train.irt.fitter import IrtFitter, scored_decisions
from router_train.irt.router import IrtConfig, fit_irt_router
from router_train.irt.shared_fit import for_pool, pool_tolerance

SMALL = IrtConfig(dims=(0, 1), alphas=(3.0,), temperatures=(1.0, 2.0), inner_folds=3)
"""A small search, so each fit takes well under a second."""

POOLS = [
    ["devstral-small-2512", "gpt-5.1-medium", "gemini-3-pro-preview"],
    ["minimax-m2.5-high", "o3", "claude-opus-4.5-medium"],
    ["gpt-5-mini", "claude-sonnet-4.5"],
]
"""Pools other than the one the shared fit is made with (the tolerance is all that differs)."""


@pytest.fixture(scope="module")
def table() -> OracleTable:
    # a pool of the bundled (bash-only) candidates, whose other pools the shared fit routes
    return build_table("bash-only")


@pytest.fixture(scope="module")
def matrix() -> ResultsMatrix:
    return load_results_matrix()


@pytest.fixture(scope="module")
def index() -> CandidateIndex:
    return CandidateIndex.load()


def test_a_pools_tolerance_is_the_one_its_own_fit_chooses(
    table: OracleTable, matrix: ResultsMatrix, index: CandidateIndex
) -> None:
    train_ids = [t.instance_id for t in table.tasks[:150]]
    test_ids = [t.instance_id for t in table.tasks[150:220]]
    shared = fit_irt_router(table.tasks[:150], matrix, table.pool, config=SMALL, seed=2)
    # The pool the shared fit was made with: re-choosing its tolerance changes nothing.
    assert for_pool(shared, table.tasks[:150], table.pool, SMALL).fit == shared.fit
    chosen = set()
    for ids in POOLS:
        pool = index.pool(ids)
        train, test = index.records(pool, train_ids), index.records(pool, test_ids)
        # The pool's own fit (its inner folds stratified by its own oracle labels) chose a tolerance by
        # `fit_irt_router`'s rule; `pool_tolerance` on that fit's scores makes the same choice, whatever
        # the order of the train tasks.
        own = fit_irt_router(train, matrix, pool, config=SMALL, seed=2)
        assert for_pool(own, list(reversed(train)), pool, SMALL).fit == own.fit
        # The shared fit for this pool: its parameters, the pool's tolerance on its out-of-fold scores.
        mine = for_pool(shared, train, pool, SMALL)
        tol = pool_tolerance(shared, train, pool, SMALL)
        assert mine.fit == shared.fit.model_copy(update={"tolerance": tol})
        assert mine.route(test, pool) == shared.route(test, pool, tolerance=tol)
        chosen.add(tol)
        # The fitter's scoring of the shared fit is `IrtFitter`'s, which fits and scores alike.
        (d1,), (s1,) = scored_decisions(own, pool, train, test, "irt")
        (d2,), (s2,) = IrtFitter(matrix, pool, config=SMALL).fit_scored(train, test, 2)
        assert d1.choices == d2.choices
        assert s1.train.tobytes() == s2.train.tobytes() and s1.test.tobytes() == s2.test.tobytes()
        assert s1.probabilities is not None and s2.probabilities is not None
        assert np.array_equal(s1.probabilities, s2.probabilities)
    assert chosen <= set(SMALL.tolerances)
    with pytest.raises(ValueError, match="out-of-fold scores"):
        pool_tolerance(shared, index.records(index.pool(POOLS[0]), train_ids[:100]), index.pool(POOLS[0]))
