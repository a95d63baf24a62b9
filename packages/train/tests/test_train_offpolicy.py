"""Off-policy estimates from serve's records (`router_train.offpolicy`), `router-train feedback`'s
estimates, `--candidate`, `--refit`, and `router-train replay`: estimators against known truths, the
under-explored warning, a refit `route` loads, the replay's determinism, bad input one line exit 2.

The tables are built from the bundled sources with explicit pools (`bash-only-openhands` with
`--drop-missing`, and `bash-only` over its tasks), on a small task subset so the IRT fit takes seconds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from router_oracle.cli import main as oracle_main
from router_oracle.table_check import load_table
from router_train.checkpoint_io import dumps_checkpoint
from router_train.cli import main
from router_train.irt.checkpoint import read_irt
from router_train.offpolicy.estimators import Logged, always, estimate_policy
from router_train.offpolicy.refit_point import TrafficSettings, paired_difference, traffic_point
from router_train.offpolicy.replay import replay_seed, setup
from router_train.route import CheckpointSpec, load_router
from router_train.scoring.default_point import SafePoint
from router_train.scoring.safe_point import Margins
from router_train.serve.explore import propensity, serve_choice
from router_train.serve.records import DecisionRecord, OutcomeRecord, record_line


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The `bash-only-openhands` traffic table (499 tasks), the `bash-only` table of the same tasks, and
    an IRT prior fitted on a tenth of the latter (the env split's train side at eval fraction 0.9)."""
    d = tmp_path_factory.mktemp("offpolicy")
    oh, bo = d / "oh.json", d / "bo.json"
    build = ["build", "--no-progress", "--pool"]
    assert oracle_main([*build, "bash-only-openhands", "--drop-missing", "-o", str(oh)]) == 0
    assert oracle_main([*build, "bash-only", "--tasks", str(oh), "-o", str(bo)]) == 0
    fit = ["fit", "irt", "--table", str(bo), "--split", "train", "--eval-fraction", "0.9"]
    assert main([*fit, "--output-dir", str(d / "prior")]) == 0
    return {"oh": oh, "bo": bo, "prior": d / "prior" / "checkpoint.json"}


# --- estimators on synthetic logs with known truth ---------------------------------------------------


def _world(seed: int, n: int = 300, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Per task and model, a resolve probability and a router pick (column)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 0.9, size=(n, k))
    picks = np.argmax(p + rng.normal(0, 0.3, size=(n, k)), axis=1)
    return p, picks


def _log(p: np.ndarray, router: np.ndarray, rate: float, rng: np.random.Generator) -> Logged:
    n, k = p.shape
    explore = rng.uniform(size=n) < rate
    served = np.where(explore, rng.integers(0, k, size=n), router)
    prop = np.asarray([propensity(str(s), str(r), rate, k) for s, r in zip(served, router, strict=True)])
    resolved = (rng.uniform(size=n) < p[np.arange(n), served]).astype(float)
    return Logged([f"m{j}" for j in range(k)], served, prop, resolved, np.asarray(rng.uniform(0, 1, size=n)))


def test_ips_is_unbiased_over_a_seeded_simulation() -> None:
    p, router = _world(0)
    truth = p[:, 2].mean()  # always m2, in expectation over outcomes
    rng = np.random.default_rng(1)
    ips, snips = [], []
    for _ in range(300):
        e = estimate_policy(
            "always:m2", always(2, len(p)), _log(p, router, 0.3, rng), bootstrap=1, min_tried=1
        )
        assert e.resolved is not None
        ips.append(e.resolved.ips.value)
        snips.append(e.resolved.snips.value)
    se = np.std(ips) / np.sqrt(len(ips))
    assert abs(np.mean(ips) - truth) < 3 * se
    assert np.std(snips) < np.std(ips)  # self-normalising trades a little bias for less variance


def test_snips_weights_and_the_serving_policy() -> None:
    logged = Logged(
        models=["a", "b"],
        served=np.asarray([0, 0, 1, 1]),
        propensity=np.asarray([0.5, 0.25, 0.5, 1.0]),
        resolved=np.asarray([1.0, 0.0, 1.0, 1.0]),
        cost=np.asarray([1.0, 2.0, 3.0, np.nan]),
    )
    e = estimate_policy("always:a", always(0, 4), logged, bootstrap=50, min_tried=1)
    assert e.resolved is not None and e.cost is not None
    # weights 2, 4, 0, 0: IPS = (2 x 1 + 4 x 0) / 4, SNIPS = 2 / 6, ESS = 36 / 20
    assert e.resolved.ips.value == pytest.approx(0.5)
    assert e.resolved.snips.value == pytest.approx(2 / 6)
    assert e.ess == pytest.approx(36 / 20) and e.matched == 2
    assert e.cost.snips.value == pytest.approx((2 * 1 + 4 * 2) / 6)  # the unpriced task is left out
    serving = estimate_policy("serving", None, logged, bootstrap=50, min_tried=1)
    assert serving.resolved is not None and serving.resolved.ips.value == pytest.approx(0.75)
    assert serving.ess == pytest.approx(4.0)


def test_dr_with_a_perfect_reward_model_is_the_truth() -> None:
    rng = np.random.default_rng(3)
    n, k = 200, 3
    outcome = (rng.uniform(size=(n, k)) < 0.6).astype(float)  # every counterfactual known
    router = rng.integers(0, k, size=n)
    explore = rng.uniform(size=n) < 0.1
    served = np.where(explore, rng.integers(0, k, size=n), router)
    prop = np.asarray([propensity(str(s), str(r), 0.1, k) for s, r in zip(served, router, strict=True)])
    logged = Logged(["a", "b", "c"], served, prop, outcome[np.arange(n), served], np.zeros(n))
    target = (router + 1) % k
    e = estimate_policy("x", target, logged, q_resolved=outcome, bootstrap=100, min_tried=1)
    assert e.resolved is not None
    truth = outcome[np.arange(n), target].mean()
    assert e.resolved.dr.value == pytest.approx(truth, abs=1e-12)
    assert e.resolved.dr.low <= truth <= e.resolved.dr.high


def test_a_model_explored_too_little_gets_a_warning_not_a_number() -> None:
    logged = Logged(
        models=["a", "b"],
        served=np.asarray([0] * 30 + [1] * 3),
        propensity=np.full(33, 0.5),
        resolved=np.ones(33),
        cost=np.ones(33),
    )
    e = estimate_policy("always:b", always(1, 33), logged)
    assert e.resolved is None and e.cost is None
    assert e.warning is not None and "3 outcome(s) of it (< 10)" in e.warning
    assert estimate_policy("always:a", always(0, 33), logged).resolved is not None


def test_the_traffic_point_needs_the_margin_and_an_interval_above_zero() -> None:
    # Synthetic log, 3 models, serving = the router's picks explored at 0.3: model 2 resolves 80% of its
    # tasks, model 0 (the fallback) 20%, so the router's picks (mostly 2) clearly beat always-0.
    rng = np.random.default_rng(0)
    n = 600
    router = np.where(rng.uniform(size=n) < 0.8, 2, 1)
    p = np.tile([0.2, 0.5, 0.8], (n, 1))
    logged = _log(p, router, 0.3, rng)
    settings = TrafficSettings(bootstrap=300, seed=0, min_tried=10)
    diff = paired_difference(router, always(0, n), logged, settings)
    one = {name: estimate_policy(name, picks, logged, bootstrap=10).resolved for name, picks in
           (("router", router), ("always", always(0, n)))}  # fmt: skip
    assert one["router"] is not None and one["always"] is not None
    assert diff.value == pytest.approx(one["router"].dr.value - one["always"].dr.value)
    assert diff.low > 0.3
    kept = traffic_point(logged, router, 0, Margins(default=0.01), settings, "LOG", None)
    assert kept.choice == "router" and kept.traffic is not None and kept.traffic.difference is not None
    # the same estimate under a margin above it: the fallback, saying the margin is what it missed
    high = traffic_point(logged, router, 0, Margins(default=diff.value + 0.01), settings, "LOG", None)
    assert high.choice == "cheapest" and high.model == "m0" and high.traffic is not None
    assert high.traffic.reason.endswith(f"not above the margin of {100 * (diff.value + 0.01):.1f} points")
    # the same data, byte for byte the same point
    again = traffic_point(logged, router, 0, Margins(default=0.01), settings, "LOG", None)
    assert again.model_dump_json() == kept.model_dump_json()


# --- feedback LOG: estimates, --candidate, --refit -----------------------------------------------------


def _write_log(
    path: Path,
    table: Path,
    *,
    rate: float = 0.3,
    cost: str | None = None,
    win: str | None = None,
    own_ids: bool = False,
) -> None:
    """A decision log as serve writes it: the traffic table's tasks routed to the first model, explored
    at `rate` (serve's draw), each with its outcome from the table (`win`: that model always resolves).
    `own_ids`: a team's own tasks (ids no task file has), each decision keeping the text it routed on."""
    t = load_table(table)
    pool = t.pool.ids
    lines = []
    for n, task in enumerate(sorted(t.tasks, key=lambda x: x.instance_id)):
        s = serve_choice(task.instance_id, pool[0], pool, rate, 0)
        assert s.model is not None and s.propensity is not None
        instance_id = f"team-{n}" if own_ids else task.instance_id
        d = DecisionRecord(
            instance_id=instance_id, model=s.model, router="irt:x", time="2026-01-01T00:00:00.000Z",
            task=f"k{n:04d}", latency_ms=1.0, router_model=pool[0], explored=s.explored,
            propensity=s.propensity, scores={m: 0.0 for m in pool}, repo=task.repo,
            issue_text=task.problem_statement if own_ids else None,
        )  # fmt: skip
        resolved = (s.model == win) if win else task.per_model[s.model].resolve_rate >= 0.5
        o = OutcomeRecord(
            time="2026-01-01T00:00:01.000Z", task=d.task, instance_id=instance_id, model=s.model,
            resolved=resolved, cost=task.per_model[s.model].cost,
        )  # fmt: skip
        line = record_line(o)
        if cost is not None:  # a cost no serve writes (NaN): the reader must refuse it
            line = line.replace('"cost":' + json.dumps(o.cost), f'"cost":{cost}')
        lines += [record_line(d), line]
    path.write_text("".join(lines), encoding="utf-8")


def test_feedback_estimates_a_candidate_and_refits_a_checkpoint_route_loads(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "decisions.jsonl"
    _write_log(log, tables["oh"], win="kimi-k2.5-high")
    out = tmp_path / "refit"
    argv = ["feedback", str(log), "--tasks", str(tables["oh"]), "--candidate", str(tables["prior"])]
    # The log says kimi resolves everything and claude nothing: far from the prior, refused unless accepted.
    assert main([*argv, "--refit", str(tables["prior"]), "-o", str(out)]) == 2
    _one_error_line(capsys, "logged resolve rate", "departs from the prior", "--accept-shift")
    assert not out.exists()
    argv.append("--accept-shift")
    assert main([*argv, "--refit", str(tables["prior"]), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "off-policy estimates on" in text and f"candidate:{tables['prior']}" in text
    assert "always:claude-opus-4.6" in text and "IPS [95%]" in text
    report = json.loads((out / "refit.json").read_text())
    shifts = {m["model"]: m["shift"] for m in report["models"]}
    assert shifts["kimi-k2.5-high"] > 0 > shifts["claude-opus-4.6"]  # the log says kimi resolves, claude not
    before, after = read_irt(tables["prior"]), read_irt(out / "checkpoint.json")
    assert after.fit.c != before.fit.c and after.fit.run_ids == before.fit.run_ids
    router = load_router(CheckpointSpec(checkpoint=out / "checkpoint.json"))
    task = load_table(tables["oh"]).tasks[0]
    assert router.route(task).model in before.pool.ids
    picks = [d.model for d in router.route_many(list(load_table(tables["oh"]).tasks))]
    assert picks.count("kimi-k2.5-high") > len(picks) // 2
    # the same log and flags give the same checkpoint bytes
    again = tmp_path / "again"
    assert main([*argv, "--refit", str(tables["prior"]), "-o", str(again)]) == 0
    assert (again / "checkpoint.json").read_bytes() == (out / "checkpoint.json").read_bytes()


def test_refit_learns_a_teams_own_tasks_from_the_log_alone(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "team.jsonl"
    _write_log(log, tables["oh"], own_ids=True)
    out = tmp_path / "refit"
    # The traffic is another harness's (OpenHands) than the prior's (bash-only): a real shift, accepted.
    argv = ["feedback", str(log), "--refit", str(tables["prior"]), "--accept-shift"]
    assert main([*argv, "-o", str(out)]) == 0
    assert "refit of" in capsys.readouterr().out and (out / "checkpoint.json").is_file()
    # the same traffic with only the texts' hashes kept: the texts must come from --tasks
    hashed = tmp_path / "hashed.jsonl"
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    rows = [{**r, "issue_text": None} if r.get("event") == "decision" else r for r in rows]
    hashed.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv[1] = str(hashed)
    assert main([*argv, "-o", str(tmp_path / "h")]) == 2
    _one_error_line(capsys, "no text of the logged task 'team-0'", "give --tasks")


def _cheapest_prior(tables: dict[str, Path], tmp_path: Path) -> Path:
    """The prior deployed as "always the cheapest" (kimi-k2.5-high, the pool's cheapest)."""
    prior = read_irt(tables["prior"])
    assert prior.safe_point is not None
    safe = prior.safe_point.model_copy(update={"choice": "cheapest", "model": "kimi-k2.5-high"})
    path = tmp_path / "cheapest.json"
    path.write_text(dumps_checkpoint(prior.model_copy(update={"safe_point": safe})), encoding="utf-8")
    return path


def _refit_point(
    log: Path, prior: Path, tasks: Path, out: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[SafePoint, str]:
    """`feedback --refit` of `prior` on `log`: the refitted checkpoint's default point and the output."""
    argv = ["feedback", str(log), "--tasks", str(tasks), "--refit", str(prior), "--accept-shift"]
    assert main([*argv, "-o", str(out)]) == 0
    text = capsys.readouterr().out
    point = read_irt(out / "checkpoint.json").safe_point
    assert point is not None and point.traffic is not None
    return point, text


def test_refit_rederives_the_default_point_from_the_traffic(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 53: a prior deployed as "always the cheapest" stays so after any number of outcomes (the refit
    # copied its safe point); the refit's point is chosen on the logged traffic instead.
    prior = _cheapest_prior(tables, tmp_path)
    wins = tmp_path / "wins.jsonl"  # gpt-5.2-high resolves every task, the others none
    _write_log(wins, tables["oh"], win="gpt-5.2-high")
    point, text = _refit_point(wins, prior, tables["oh"], tmp_path / "wins", capsys)
    assert point.choice == "router" and point.model is None
    t = point.traffic
    assert t is not None and t.fallback == "kimi-k2.5-high" and t.tasks == 499
    assert t.difference is not None and t.difference.low > 0 and t.difference.value > t.margin == 0.01
    assert t.router is not None and t.fallback_resolved is not None
    assert t.router.value > 0.5 > t.fallback_resolved.value
    assert "default point (chosen on the logged traffic" in text and t.reason in text
    # the checkpoint routes at it: the router's own picks, not always kimi
    router = load_router(CheckpointSpec(checkpoint=tmp_path / "wins" / "checkpoint.json"))
    picks = [d.model for d in router.route_many(list(load_table(tables["oh"]).tasks)[:40], explain=False)]
    assert set(picks) != {"kimi-k2.5-high"}

    # the table's own outcomes: the router resolves more than the cheapest model, but not surely so on
    # this log (its interval reaches below zero): the fallback, with its numbers
    plain = tmp_path / "plain.jsonl"
    _write_log(plain, tables["oh"])
    point, _ = _refit_point(plain, prior, tables["oh"], tmp_path / "plain", capsys)
    t = point.traffic
    assert point.choice == "cheapest" and point.model == "kimi-k2.5-high" and t is not None
    assert t.router is not None and t.fallback_resolved is not None and t.difference is not None
    assert t.router.value != t.fallback_resolved.value and t.difference.low <= 0
    assert t.reason.startswith("always kimi-k2.5-high: on 499 logged outcomes (DR, 95% bootstrap)")
    assert f"{t.router.value:.3f} [{t.router.low:.3f}, {t.router.high:.3f}]" in t.reason
    assert f"{100 * t.difference.value:+.1f} points [{100 * t.difference.low:+.1f}," in t.reason

    # 20 logged tasks: too few outcomes of the models to estimate; the fallback, saying there is none
    few = tmp_path / "few.jsonl"
    few.write_text("".join(wins.read_text().splitlines(keepends=True)[:40]), encoding="utf-8")
    point, _ = _refit_point(few, prior, tables["oh"], tmp_path / "few", capsys)
    t = point.traffic
    assert point.choice == "cheapest" and point.model == "kimi-k2.5-high" and t is not None
    assert t.difference is None and t.router is None and t.tasks == 20
    assert "no estimate of the refitted router on the 20 logged outcomes" in t.reason
    assert "explore more before trusting an estimate" in t.reason


def test_checkpoints_not_refitted_keep_their_bytes(tables: dict[str, Path]) -> None:
    # `SafePoint.traffic` is left out of files where it is None: a fitted checkpoint reads and writes back
    # byte for byte as before the field existed.
    text = tables["prior"].read_text(encoding="utf-8")
    assert '"traffic"' not in text and dumps_checkpoint(read_irt(tables["prior"])) == text


def _one_error_line(capsys: pytest.CaptureFixture[str], *words: str) -> None:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


def test_feedback_bad_input_is_one_line_exit_2(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "outcome", "task": \n', encoding="utf-8")
    assert main(["feedback", str(bad)]) == 2
    _one_error_line(capsys, "line 1")
    nan = tmp_path / "nan.jsonl"
    _write_log(nan, tables["oh"], cost="NaN")
    assert main(["feedback", str(nan)]) == 2
    _one_error_line(capsys, "nan.jsonl", "cost")
    # a log of two models only: the candidate routes a third it never served
    two = tmp_path / "two.jsonl"
    _write_log(two, tables["oh"], rate=0.0)
    lines = [json.loads(ln) for ln in two.read_text().splitlines()]
    for r in lines:
        if r.get("scores"):
            r["scores"] = {m: 0.0 for m in list(r["scores"])[:1]}
    two.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert (
        main(["feedback", str(two), "--tasks", str(tables["oh"]), "--candidate", str(tables["prior"])]) == 2
    )
    _one_error_line(capsys, "--candidate", "not in the log's pool")
    assert main(["feedback", str(two), "--refit", str(tables["prior"])]) == 2
    _one_error_line(capsys, "--output-dir")
    # an IRT checkpoint fitted on task features: the log holds no features of the served tasks
    doc = json.loads(tables["prior"].read_text())
    fit = doc["fit"]
    fit["task_features"] = {"source": "pre-pass.csv", "columns": ["a"], "mean": [0.0], "scale": [1.0]}
    fit["w"].append([0.0] * (fit["k"] + 1))
    fit["x_mean"].append(0.0)
    featured = tmp_path / "featured.json"
    featured.write_text(json.dumps(doc), encoding="utf-8")
    log = tmp_path / "ok.jsonl"
    _write_log(log, tables["oh"], win="kimi-k2.5-high")
    argv = ["feedback", str(log), "--tasks", str(tables["oh"]), "--refit", str(featured)]
    assert main([*argv, "-o", str(tmp_path / "never")]) == 2
    _one_error_line(capsys, "featured.json", "trained on task features (pre-pass.csv)")
    assert not (tmp_path / "never").exists()


# --- replay ------------------------------------------------------------------------------------------


def test_replay_is_deterministic_per_seed(tables: dict[str, Path]) -> None:
    s = setup(read_irt(tables["prior"]), load_table(tables["oh"]), "test")
    a = replay_seed(s, 3, 0.1, 10, 30, 50, 5)
    b = replay_seed(s, 3, 0.1, 10, 30, 50, 5)
    c = replay_seed(s, 4, 0.1, 10, 30, 50, 5)
    assert a.model_dump_json() == b.model_dump_json()
    assert a.curves["oracle resolved"] != c.curves["oracle resolved"]  # another order
    # the oracle bounds every policy's resolved count; the static prior is the prior's own routes
    for name in ("learning", "static prior", "best fixed"):
        assert a.curves[f"{name} resolved"][-1] <= a.curves["oracle resolved"][-1] + 1e-9
    truths = {e.estimate.policy: e.true_resolved for e in a.estimates}
    assert set(truths) >= {"static prior", "learned (final)"}


def test_replay_command_and_its_bad_input(
    tables: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "replay",
        str(tables["prior"]),
        str(tables["oh"]),
        "--seeds",
        "2",
        "--horizon",
        "30",
        "--bootstrap",
        "50",
    ]
    assert main([*argv, "--plot", str(tmp_path / "r.png"), "--report", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "after 30 tasks" in out and "learning - static prior" in out and "IPS" in out
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(json.loads((tmp_path / "r.json").read_text())["seeds"]) == 2
    # traffic of another pool than the prior's
    other = tmp_path / "other.json"
    table = json.loads(tables["oh"].read_text())
    table["pool"]["models"][0]["id"] = "someone-else"
    for t in table["tasks"]:
        t["per_model"]["someone-else"] = t["per_model"].pop("claude-opus-4.6")
    other.write_text(json.dumps(table), encoding="utf-8")
    assert main(["replay", str(tables["prior"]), str(other)]) == 2
    _one_error_line(capsys)
    with pytest.raises(SystemExit) as exc:  # argparse checks the flag against its field's bounds
        main(["replay", str(tables["prior"]), str(tables["oh"]), "--explore", "1.5"])
    assert exc.value.code == 2 and "--explore" in capsys.readouterr().err
