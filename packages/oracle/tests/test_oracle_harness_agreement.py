"""The second measure of rollout noise: the same model under two harnesses (`harness_agreement`), which
measure an estimate uses, and what `router-oracle stats` says about it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pytest

from router_oracle.analysis.harness_agreement import pair_harnesses
from router_oracle.analysis.noise import estimate_noise
from router_oracle.analysis.run_agreement import measure_models
from router_oracle.analysis.stats import compute_stats, format_stats, stats_json
from router_oracle.build import build_table
from router_oracle.sources.run_entry import RunEntry
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


def table_of(runs: Mapping[str, Mapping[str, Sequence[bool]]]) -> OracleTable:
    """A table from resolved flags: `runs[model][run][task]`; tasks are `t0`, `t1`, ...; cost 1 each."""
    pool = Pool(name="synthetic", models=[PoolModel(id=m, name=m, runs=list(rs)) for m, rs in runs.items()])
    n = len(next(iter(next(iter(runs.values())).values())))
    tasks = []
    for i in range(n):
        per_model = {}
        for m, rs in runs.items():
            outcomes = [RunOutcome(run=r, resolved=flags[i], cost=1.0) for r, flags in rs.items()]
            rate = sum(o.resolved for o in outcomes) / len(outcomes)
            per_model[m] = ModelOutcome(resolve_rate=rate, cost=1.0, runs=outcomes)
        pick = pick_for_task(pool, RULE, per_model)
        tasks.append(
            TaskRecord(
                instance_id=f"t{i}",
                repo="o/r",
                difficulty=None,
                problem_statement="",
                per_model=per_model,
                oracle=pick.oracle,
                best=pick.best,
                all_failed=pick.all_failed,
            )
        )
    return OracleTable(pool=pool, rule=RULE, sources=[], command="synthetic", tasks=tasks)


def entry(run: str, harness: str, model: str) -> RunEntry:
    return RunEntry(
        run=run,
        name=run,
        tags=(f"Model: {model}",),
        harness=harness,
        agent_version=None,
        date=None,
        headline_resolved=None,
        resolved_count=None,
        task_ids=None,
    )


def flags_of(*bits: int) -> dict[str, bool]:
    return {f"t{i}": bool(b) for i, b in enumerate(bits)}


# The pool run `oh-foo` (OpenHands) resolves t0, t1, t2 of five tasks.
POOL_FLAGS = [True, True, True, False, False]
ENTRIES = [
    entry("oh-foo", "openhands", "Foo-1-2"),  # base model foo-1.2
    entry("oh-foo-again", "openhands", "foo-1.2"),  # same harness: a re-run, not a cross-harness pair
    entry("mini-foo", "mini-swe-agent", "foo-1.2-20250101"),  # the release date is not part of the base
    entry("cc-foo", "claude-code", "foo-1.2"),
    entry("cx-foo", "codex-cli", "foo-1.2"),
    entry("cc-bar", "claude-code", "bar-1"),  # another model
    entry("nf-foo", "gemini-cli", "foo-1.2"),  # no flags published: not paired
]
FLAGS = {
    "oh-foo": flags_of(*POOL_FLAGS),
    "oh-foo-again": flags_of(0, 0, 0, 0, 0),
    "mini-foo": flags_of(1, 1, 0, 1, 0),  # A only t2, B only t3
    "cc-foo": flags_of(1, 0, 0, 0, 0),  # A only t1, t2: a level shift
    "cx-foo": {"t0": False, "t1": True, "t2": True, "t3": True},  # no t4: left out of this pair
    "cc-bar": flags_of(1, 1, 1, 1, 1),
}


def test_the_pairing_rule() -> None:
    table = table_of({"foo": {"oh-foo": POOL_FLAGS}, "solo": {"solo-run": [False] * 5}})
    [m] = pair_harnesses(table, ENTRIES, FLAGS, known={"oh-foo"})  # `solo` has no entry: no pair
    assert m.id == "foo" and m.runs == ["oh-foo"] and m.source == "cross_harness"
    got = [(p.harness_a, p.harness_b, p.pair.run_b, p.tasks, p.pair.a_only, p.pair.b_only) for p in m.pairs]
    assert got == [  # sorted by (harness, run); the same harness, another model, no flags: left out
        ("openhands", "claude-code", "cc-foo", 5, 2, 0),
        ("openhands", "codex-cli", "cx-foo", 4, 1, 1),
        ("openhands", "mini-swe-agent", "mini-foo", 5, 1, 1),
    ]
    assert all(p.base_model == "foo-1.2" and p.pair.run_a == "oh-foo" for p in m.pairs)
    # codex on its 4 tasks: A resolves t0-t2 (3/4), B t1-t3 (3/4), disagreeing on t0 and t3
    assert (m.pairs[1].pair.resolved_a, m.pairs[1].pair.disagreement) == (0.75, 0.5)
    # means over pairs, each on its own tasks: disagreement (2/5 + 2/4 + 2/5) / 3, shift (2/5 + 0 + 0) / 3
    assert m.disagreement == pytest.approx(1.3 / 3, abs=1e-6)
    assert m.level_shift == pytest.approx(0.4 / 3, abs=1e-6)
    assert m.noise_disagreement == pytest.approx(0.3, abs=1e-6)
    assert m.resolve_rate == pytest.approx((0.6 + 0.2 + 0.75 + 0.75 + 0.6 + 0.6) / 6, abs=1e-6)
    # rule 1: a pool run whose table flags are not known to be its source's is not paired
    assert pair_harnesses(table, ENTRIES, FLAGS, known=set()) == []


def test_several_pool_runs_and_no_pair_twice() -> None:
    """A pool model with runs under two harnesses: each run is paired with the other harnesses' runs, and
    the pair of its own two runs is counted once."""
    table = table_of({"foo": {"oh-foo": POOL_FLAGS, "cc-foo": [True, False, False, False, False]}})
    [m] = pair_harnesses(table, ENTRIES, FLAGS, known={"oh-foo", "cc-foo"})
    pairs = [(p.pair.run_a, p.pair.run_b) for p in m.pairs]
    assert pairs == [
        ("oh-foo", "cc-foo"),
        ("oh-foo", "cx-foo"),
        ("oh-foo", "mini-foo"),
        ("cc-foo", "cx-foo"),
        ("cc-foo", "mini-foo"),
        ("cc-foo", "oh-foo-again"),
        # (cc-foo, oh-foo) is (oh-foo, cc-foo) again
    ]


def test_cross_harness_is_used_only_without_same_harness_reruns() -> None:
    table = table_of(
        {
            "foo": {"oh-foo": POOL_FLAGS},
            "low": {"low-run": [True, False, False, False, False]},  # 20%: closest to foo's cross measure
        }
    )
    cross = pair_harnesses(table, ENTRIES, FLAGS, known={"oh-foo"})
    est = estimate_noise(table, measured=cross)
    assert est.measure == "cross_harness" and est.measured == [] and est.cross_harness == cross
    assert [(m.measured_as, m.measured_source, m.match) for m in est.models] == [
        ("foo", "cross_harness", "other harness"),
        ("foo", "cross_harness", "closest resolve rate"),  # `low` borrows
    ]
    # the level shift between the harnesses is left out of the figure, kept in the upper one
    assert est.models[0].noise_disagreement == pytest.approx(0.3, abs=1e-6)
    assert est.models[0].disagreement == pytest.approx(1.3 / 3, abs=1e-6)
    assert est.models[1].noise_disagreement == pytest.approx(0.3, abs=1e-6)  # under 2r(1-r) = 0.32
    assert est.noise is not None and est.upper is not None
    assert 0 < est.noise.noise_points < est.upper.noise_points
    # A same-harness re-run on the table: the estimate uses it; the cross-harness pairs are only shown.
    rerun = table_of(
        {"foo": {"oh-foo": POOL_FLAGS}, "low": {"a": [True] + [False] * 4, "b": [False, True] + [False] * 3}}
    )
    same = measure_models(rerun, "table")
    est = estimate_noise(rerun, measured=[*same, *pair_harnesses(rerun, ENTRIES, FLAGS, known={"oh-foo"})])
    assert est.measure == "same_harness" and est.measured == same and len(est.cross_harness) == 1
    assert [(m.measured_as, m.measured_source, m.match) for m in est.models] == [
        ("low", "table", "closest resolve rate"),
        ("low", "table", "own runs"),
    ]


REFERENCE = Pool(
    name="reference",
    models=[
        PoolModel(id="claude-opus-4.7", name="Claude Opus 4.7", runs=["openhands-v1.24.0_claude-opus-4-7"]),
        PoolModel(id="gpt-5.5", name="GPT-5.5", runs=["openhands-v1.18.1_GPT-5.5"]),
        PoolModel(
            id="nemotron-3-super", name="Nemotron 3 Super", runs=["openhands-v1.16.1_Nemotron-3-Super"]
        ),
    ],
)
"""The reference pool's runs (the bundled pool `reference`, to become `default`)."""


def test_reference_pool_stats_use_the_other_harnesses() -> None:
    stats = compute_stats(build_table(REFERENCE))
    est = stats.noise
    assert est.measure == "cross_harness" and est.measured == [] and est.unavailable is None
    runs = {m.id: [(p.harness_b, p.pair.run_b, p.tasks) for p in m.pairs] for m in est.cross_harness}
    assert runs == {
        "claude-opus-4.7": [("claude-code", "claude-code-v1.18.0_claude-opus-4-7", 500)],
        "gpt-5.5": [("codex-cli", "codex-cli-v1.19.1_GPT-5.5", 500)],  # no costs, flags enough
    }
    assert [(m.id, m.measured_as, m.match) for m in est.models] == [
        ("claude-opus-4.7", "claude-opus-4.7", "other harness"),
        ("gpt-5.5", "gpt-5.5", "other harness"),
        ("nemotron-3-super", "gpt-5.5", "closest resolve rate"),  # no other harness: borrows
    ]
    assert est.noise is not None and est.upper is not None
    assert 0 < est.noise.noise_points < est.upper.noise_points < est.headroom_points  # type: ignore[operator]
    text = format_stats(stats)
    assert "rollout noise: runs of one model" not in text  # no same-harness re-runs to show
    assert "the estimate uses these (no same-harness re-runs to draw on), level shift left out" in text
    assert "claude-opus-4.7   openhands / claude-code    500   81.6% /  75.8%" in text
    assert "gpt-5.5           openhands / codex-cli      500" in text
    assert "nemotron-3-super    5.6% (5.8%)            gpt-5.5 (cross_harness, closest resolve rate)" in text
    assert "counting all disagreement between harnesses) expected from rollout noise alone" in text
    noise = json.loads(stats_json(stats))["noise"]
    assert noise["measure"] == "cross_harness"
    assert [p["pair"]["run_b"] for m in noise["cross_harness"] for p in m["pairs"]] == [
        "claude-code-v1.18.0_claude-opus-4-7",
        "codex-cli-v1.19.1_GPT-5.5",
    ]


def test_bash_only_keeps_its_reruns_and_shows_the_pairs_beside() -> None:
    stats = compute_stats(build_table("bash-only"))
    est = stats.noise
    assert est.measure == "same_harness" and {m.measured_source for m in est.models} == {"bundled"}
    assert [m.id for m in est.cross_harness] == ["claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high"]
    kimi = est.cross_harness[2].pairs[0]
    assert (kimi.harness_a, kimi.harness_b, kimi.tasks) == ("mini-swe-agent", "openhands", 499)  # one null
    text = format_stats(stats)
    assert "shown beside the re-runs above, which the estimate uses" in text
    assert text.index("rollout noise: runs of one model") < text.index("rollout noise, second measure")
