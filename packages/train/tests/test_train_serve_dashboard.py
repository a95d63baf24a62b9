"""`GET /dashboard`: the admin token, the page's figures against `router-train feedback`'s on the same store,
escaping, and the page in a real headless Chromium (no console error; a screenshot).

A real serve (`router-train local` checkpoint, stub upstreams on 127.0.0.1, `[explore]`, priced answers)
is sent tasks in waves a second apart, and outcomes are posted for most of them, as a harness would.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import time
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import headless_browser
import httpx
import pytest
import required_service
import tomli_w
from floor_stubs import BUDGET, MODELS, TOKEN_ENV, drive, floor_router, traffic
from floor_stubs import TOKEN as FLOOR_TOKEN
from floor_stubs import write_config as floor_config
from headless_browser import chromium
from serve_stubs import (
    ServerThread,
    StubUpstream,
    bundled_issues,
    native_router,
    proxy_app,
    running_upstreams,
    serving,
    trained_checkpoint,
    write_config,
)

from router_train.cli import main
from router_train.dashboard.data import dashboard
from router_train.dashboard.page import render
from router_train.dashboard.render_process import EstimateCache
from router_train.offpolicy.from_log import logged_tasks
from router_train.offpolicy.summary import default_estimates
from router_train.route import Router
from router_train.scoring.floor import Objective
from router_train.serve import TASK_HEADER, check_serves_pool, read_config
from router_train.serve.config import ServeConfigError
from router_train.serve.export import ServeRecords
from router_train.serve.records import DecisionRecord, OutcomeRecord
from router_train.serve_app import build_app

FEEDBACK_ENV, FEEDBACK_TOKEN = "DASHBOARD_TEST_FEEDBACK_TOKEN", "fb-7c1e"
ADMIN_ENV, ADMIN_TOKEN = "DASHBOARD_TEST_ADMIN_TOKEN", "admin-93b2"
PRICES = {"input_price": 3.0, "output_price": 15.0}
RESOLVE_RATE = {"claude-opus-4.7": 0.75, "gpt-5.5": 0.65, "nemotron-3-super": 0.5}
"""How often the harness double resolves a task of each model (drawn from the task id's hash)."""
TASK_COST = {"claude-opus-4.7": 0.45, "gpt-5.5": 0.3, "nemotron-3-super": 0.06}
"""USD per task the harness double reports, per model (times 0.5-1.5, from the task id's hash)."""
WAVES, PER_WAVE = 6, 14


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_checkpoint(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def router(checkpoint: Path) -> Router:
    return native_router(checkpoint)


@pytest.fixture(scope="module")
def stubs(router: Router) -> Iterator[dict[str, tuple[StubUpstream, ServerThread]]]:
    with running_upstreams(router.pool) as running:
        yield running


@pytest.fixture(autouse=True)
def _tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FEEDBACK_ENV, FEEDBACK_TOKEN)
    monkeypatch.setenv(ADMIN_ENV, ADMIN_TOKEN)


def config(tmp_path: Path, checkpoint: Path, stubs: Any, admin: bool = True) -> Path:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs, **{m: PRICES for m in stubs})
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc["feedback"] = {"token_env": FEEDBACK_ENV}
    doc["explore"] = {"rate": 0.5, "seed": 3}
    if admin:
        doc["admin"] = {"token_env": ADMIN_ENV}
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return cfg


def _unit(text: str) -> float:
    """A number in [0, 1) drawn from `text`'s hash (the harness double's dice)."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 16**8


def send_traffic(url: str, waves: int = WAVES, per_wave: int = PER_WAVE) -> int:
    """`waves` waves of new tasks a second apart (two turns each); outcomes posted for every wave but
    the last (still running). The number of tasks sent."""
    issues = bundled_issues()[: waves * per_wave]
    fb = {"authorization": f"Bearer {FEEDBACK_TOKEN}"}
    with httpx.Client(base_url=url, timeout=30) as client:
        for w in range(waves):
            if w:
                time.sleep(1.05)
            for instance_id, _, issue in issues[w * per_wave : (w + 1) * per_wave]:
                msgs: list[dict[str, str]] = [{"role": "user", "content": issue}]
                r = client.post("/v1/chat/completions", json={"model": "router", "messages": msgs})
                assert r.status_code == 200, r.text
                msgs += [{"role": "assistant", "content": "step"}, {"role": "user", "content": "output"}]
                client.post("/v1/chat/completions", json={"model": "router", "messages": msgs})
                if w == waves - 1:
                    continue
                model = r.headers["x-router-model"]
                report = {
                    "task": r.headers[TASK_HEADER],
                    "resolved": _unit(instance_id + "resolved") < RESOLVE_RATE[model],
                    "cost": round(TASK_COST[model] * (0.5 + _unit(instance_id + "cost")), 4),
                }
                assert client.post("/v1/feedback", json=report, headers=fb).status_code == 200
    return len(issues)


def feedback_output(store: Path) -> str:
    """What `router-train feedback STORE` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["feedback", str(store)]) == 0
    return out.getvalue()


CELL = re.compile(r"-?\d+\.\d+ \[[^\]]*\]")
"""One estimate cell as the tables print it: `value [low, high]`."""


def cli_figures(text: str) -> dict[str, Any]:
    """The CLI's figures as text: per model its row, the decided/outcome counts, and per (policy, metric)
    the matched / ESS and its three interval cells (or the warning)."""
    lines = text.splitlines()
    models: dict[str, list[str]] = {}
    estimates: dict[tuple[str, str], tuple[str, ...]] = {}
    i = 1
    while not re.match(r"\d+ tasks decided", lines[i]):
        name, *cells = lines[i].split()
        models[name] = cells
        i += 1
    decided, with_outcome = map(int, re.findall(r"\d+", lines[i])[:2])
    start = next(j for j, line in enumerate(lines) if line.startswith("off-policy estimates on")) + 2
    policy, lead = "", ("", "")
    for line in lines[start:]:
        m = re.match(r"^(\S+)\s+(\d+)\s+([\d.]+)\s{2}(.*)$", line)
        if m:
            policy, lead = m.group(1), (m.group(2), m.group(3))
            rest = m.group(4)
        else:
            rest = line.strip()
        metric, _, printed = rest.partition(" ")
        if metric == "warning:":
            estimates[(policy, "warning")] = (*lead, printed.strip())
        else:
            estimates[(policy, metric)] = (*lead, *CELL.findall(printed))
    return {"models": models, "decided": decided, "with_outcome": with_outcome, "estimates": estimates}


PAGE_FIGURES = """
const out = {models: {}, estimates: {}, tiles: {}, savings: {...document.getElementById('savings').dataset}};
out.savings.text = document.getElementById('savings').textContent;
for (const tr of document.querySelectorAll('#models tr[data-model]'))
  out.models[tr.dataset.model] = [...tr.querySelectorAll('td[data-field]')].map(
    td => [td.textContent.trim(), td.dataset.value]);
let lead = null;
for (const tr of document.querySelectorAll('#estimates tr[data-policy]')) {
  const mine = [...tr.querySelectorAll('td[data-field]')].map(td => td.textContent.trim());
  if (mine.length) lead = mine;
  const cells = [...tr.querySelectorAll('td[data-estimator]')].map(
    td => [td.textContent.trim(), td.dataset.value, td.dataset.low, td.dataset.high]);
  const warn = tr.querySelector('td.warn');
  out.estimates[tr.dataset.policy + '|' + tr.dataset.metric] = {
    lead: lead, cells: cells, warning: warn ? warn.textContent.trim() : null};
}
for (const el of document.querySelectorAll('.tile')) out.tiles[el.id] = el.dataset.value;
out.svgs = document.querySelectorAll('svg[role=img]').length;
out.title = document.querySelector('h1').textContent;
return out;
"""
"""Reads the dashboard's figures out of the DOM (what a reader sees, and the data-* values)."""


def assert_page_equals_cli(page: dict[str, Any], cli: dict[str, Any]) -> None:
    """Every figure `router-train feedback` printed is on the page, written the same."""
    assert {m: [text for text, _ in cells] for m, cells in page["models"].items()} == cli["models"]
    for cells in page["models"].values():  # the exact values behind the text
        for (text, value), digits in zip(cells[3:], (3, 4), strict=True):
            assert text == ("-" if value == "" else f"{float(value):.{digits}f}")
    assert (int(page["tiles"]["tasks-decided"]), int(page["tiles"]["tasks-with-outcome"])) == (
        cli["decided"],
        cli["with_outcome"],
    )
    shown = {}
    for key, row in page["estimates"].items():
        policy, metric = key.rsplit("|", 1)
        if metric == "warning":
            shown[(policy, metric)] = (*row["lead"], row["warning"].removeprefix("warning: "))
        else:
            shown[(policy, metric)] = (*row["lead"], *[c[0] for c in row["cells"]])
            digits = 3 if metric == "resolved" else 4
            for text, value, low, high in row["cells"]:
                assert (
                    text == f"{float(value):.{digits}f} [{float(low):.{digits}f}, {float(high):.{digits}f}]"
                )
    assert shown == cli["estimates"]


def strongest_in_cli(cli: dict[str, Any]) -> tuple[str, float, float]:
    """The always-X with the highest printed SNIPS resolved rate: (model, its SNIPS cost, serving's)."""
    est = cli["estimates"]
    rates = {
        p: float(c[3].split()[0]) for (p, m), c in est.items() if p.startswith("always:") and m == "resolved"
    }
    best = max(rates, key=lambda p: rates[p])
    return (
        best.removeprefix("always:"),
        float(est[(best, "cost")][3].split()[0]),
        float(est[("serving", "cost")][3].split()[0]),
    )


@pytest.mark.system  # a real Chromium
def test_the_dashboard_in_a_browser_shows_the_feedback_figures(
    tmp_path: Path, checkpoint: Path, stubs: Any
) -> None:
    cfg = config(tmp_path, checkpoint, stubs)
    store = cfg.parent / "state" / "decisions.sqlite"
    with serving(proxy_app(cfg)) as server, chromium(tmp_path / "profile") as browser:
        sent = send_traffic(server.url)
        cli = cli_figures(feedback_output(store))
        assert cli["decided"] == sent and cli["with_outcome"] == sent - PER_WAVE
        browser.execute_cdp_cmd("Network.enable", {})
        bearer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": bearer})
        browser.get(f"{server.url}/dashboard")
        page = browser.execute_script(PAGE_FIGURES)
        assert browser.get_log("browser") == []  # no console error, warning or message at all
        assert page["title"] == "router-train serve: what routing did" and page["svgs"] >= 4
        assert_page_equals_cli(page, cli)
        frontier = browser.execute_script(FRONTIER_FIGURES)
        assert frontier["headline"] is not None and frontier["models"] == 3  # every model has outcomes
        model, strong_cost, serving_cost = strongest_in_cli(cli)
        assert page["savings"]["strongest"] == model and f"always-{model}" in page["savings"]["text"]
        assert float(page["savings"]["costDelta"]) == pytest.approx(serving_cost - strong_cost, abs=1.5e-4)
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.execute_cdp_cmd(  # the whole page in one shot, not only the window's part
            "Emulation.setDeviceMetricsOverride",
            {"width": 1100, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        shot = tmp_path / "dashboard.png"
        assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        print(f"dashboard screenshot: {shot}")
        assert browser.get_log("browser") == []  # nothing came later either
        # Without the token: 401, which the browser's console reports (the log is read, and works).
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})
        browser.get(f"{server.url}/dashboard")
        refused = browser.get_log("browser")
        assert any("401" in e["message"] and e["level"] == "SEVERE" for e in refused), refused


def test_the_dashboard_needs_the_admin_token(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    cfg = config(tmp_path, checkpoint, stubs)
    with serving(proxy_app(cfg)) as server:
        url = f"{server.url}/dashboard"
        for headers in ({}, {"authorization": "Bearer nope"}, {"authorization": f"Bearer {FEEDBACK_TOKEN}"}):
            r = httpx.get(url, headers=headers)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", headers
            assert "[admin] token_env" in r.json()["error"]["message"]
        # The first page starts the process that computes it (its imports take seconds on a loaded machine).
        r = httpx.get(url, headers={"authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=120)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "script-src" not in r.headers["content-security-policy"]  # default-src 'none': no script
        assert r.headers["content-security-policy"].startswith("default-src 'none'")
        # Nothing decided yet: the page says so instead of failing.
        assert "No task decided yet" in r.text and "Not yet known what routing saved" in r.text
        assert "<script" not in r.text and re.search(r'(src|href)="(?!data:)', r.text) is None

    (tmp_path / "bare").mkdir()
    bare = config(tmp_path / "bare", checkpoint, stubs, admin=False)
    with serving(proxy_app(bare)) as server:  # no [admin]: no route
        assert httpx.get(f"{server.url}/dashboard").status_code == 404


def test_an_unset_admin_token_variable_is_refused_at_start(
    tmp_path: Path, checkpoint: Path, stubs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = config(tmp_path, checkpoint, stubs)
    monkeypatch.delenv(ADMIN_ENV)
    with pytest.raises(ServeConfigError, match=f"admin.token_env: variable {ADMIN_ENV} is not set"):
        check_serves_pool(read_config(cfg), list(stubs), cfg)
    r = main(["serve", str(cfg), "--port", "0"])
    assert r == 2


FRONTIER_FIGURES = """
const h = document.getElementById('frontier-headline');
const chart = document.getElementById('frontier-chart');
return {
  headline: h ? {...h.dataset, text: h.textContent} : null,
  models: chart ? chart.querySelectorAll('g[data-model]').length : 0,
  served: !!document.getElementById('frontier-served'),
  objective: !!document.getElementById('frontier-objective'),
  line: !!document.getElementById('frontier-line'),
  beliefs: chart ? chart.querySelectorAll('circle[stroke-dasharray]').length : 0,
  rows: document.querySelectorAll('#frontier-models tr[data-model]').length,
};
"""
"""The frontier section's figures as the browser sees them."""


@pytest.fixture(scope="module")
def floor_upstreams() -> Iterator[Any]:
    with running_upstreams(MODELS) as running:
        yield running


@pytest.mark.system  # a real Chromium
def test_the_dashboard_draws_the_frontier_measured_on_this_traffic(
    tmp_path: Path, floor_upstreams: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A router at the floor at --budget 0.6, on a harness that doubles the table's costs: the learned
    # floor serves the tasks, the section draws each model's measured rate and cost, the mix line, the
    # budget, where serving lands and the learner's belief; the headline claims only what its interval says.
    monkeypatch.setenv(TOKEN_ENV, FLOOR_TOKEN)
    cfg = floor_config(tmp_path, floor_upstreams, {"budget": BUDGET}, admin={"token_env": ADMIN_ENV})
    app = build_app(read_config(cfg), floor_router(Objective(budget=BUDGET)))
    with serving(app) as server, chromium(tmp_path / "profile") as browser:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            drive(client, traffic(150, [0.6, 0.7, 0.8], [0.4, 1.0, 2.0], seed=5))
        browser.execute_cdp_cmd("Network.enable", {})
        bearer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": bearer})
        browser.get(f"{server.url}/dashboard")
        f = browser.execute_script(FRONTIER_FIGURES)
        assert browser.get_log("browser") == []
        assert f["served"] and f["objective"] and f["line"] and f["beliefs"] == 3
        assert f["models"] == f["rows"] >= 2
        head = f["headline"]
        low, high, regret = float(head["low"]), float(head["high"]), float(head["regret"])
        assert low <= regret <= high and head["tasks"] == "150"
        assert (head["claim"] == "true") == (low > 0 or high < 0)
        if head["claim"] == "false":
            assert "not told apart" in head["text"]
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1100, "height": 1500, "deviceScaleFactor": 1, "mobile": False},
        )
        shot = tmp_path / "dashboard-frontier.png"
        assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        print(f"dashboard frontier screenshot: {shot}")


HOSTILE = '<img src=x onerror="alert(1)">&amp;'
"""A model id a page must show as text, never as markup."""


def _records(models: list[str], per_model: int = 12, mixed: bool = False) -> ServeRecords:
    """Tasks spread over two days, served half by exploration, with outcomes; decided by one checkpoint
    (named HOSTILE), or with `mixed` every third by another ("ab" * 32)."""
    decisions, outcomes = {}, {}
    for i in range(per_model * len(models)):
        model = models[i % len(models)]
        task = f"{i:064x}"
        at = datetime(2026, 12, 1 + i % 2, 9, i, tzinfo=UTC).isoformat().replace("+00:00", "Z")
        decisions[task] = DecisionRecord(
            instance_id=f"task-{i}",
            model=model,
            router="r",
            time=at,
            task=task,
            latency_ms=1.0,
            router_model=models[0],
            explored=model != models[0],
            propensity=0.5 if model == models[0] else 0.25,
            checkpoint_sha256="ab" * 32 if mixed and i % 3 == 0 else HOSTILE,
        )
        outcomes[task] = OutcomeRecord(
            time=at, task=task, instance_id=f"task-{i}", model=model, resolved=i % 3 != 0, cost=0.1 + i / 100
        )
    return ServeRecords(decisions, outcomes)


def test_model_names_and_checkpoints_are_text_not_markup() -> None:
    # 24 tasks per model: the serving checkpoint's two thirds (the page estimates one checkpoint's
    # decisions, issue 44 item 4) give each model at least `MIN_TRIED` outcomes.
    records = _records(["good-model", HOSTILE], per_model=24, mixed=True)
    odd = max(records.decisions)  # a time that is no time: left off the charts, not an error page
    records.decisions[odd] = records.decisions[odd].model_copy(update={"time": "<b>yesterday</b>"})
    d = dashboard(
        records,
        router=HOSTILE,
        pool=["good-model", HOSTILE],
        serving_sha256=HOSTILE,
        now=datetime(2026, 12, 2, tzinfo=UTC),
        estimate=default_estimates,
    )
    assert d.versus is not None and d.timeline.width_s == 6 * 3600  # a day apart: 6-hour buckets
    for row in d.models:  # the resolve rate so far ends at the per-model table's
        assert d.timeline.resolved[row.model][-1] == pytest.approx(row.resolved)
        assert sum(d.timeline.tasks[row.model]) == row.tasks - (row.model == records.decisions[odd].model)
    html = render(d)
    assert "<img" not in html and 'onerror="' not in html
    assert html.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;amp;") >= 5
    assert "<script" not in html and "<b>yesterday" not in html


def test_the_estimates_are_computed_again_only_when_the_outcomes_change() -> None:
    cache = EstimateCache()
    data = logged_tasks(_records(["a", "b"], mixed=True), checkpoint_sha="ab")
    first = cache.estimates(data)
    assert cache.estimates(logged_tasks(_records(["a", "b"], mixed=True), checkpoint_sha="ab")) is first
    assert first == default_estimates(data)
    more = _records(["a", "b"], per_model=13, mixed=True)
    changed = cache.estimates(logged_tasks(more, checkpoint_sha="ab"))
    assert changed is not first and changed[0].tasks == 9


def test_without_chromium_the_browser_test_skips_naming_the_install_line_or_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Whatever this machine has: its chromedriver is found (a stand-in executable), its chromium is not.
    driver = tmp_path / "chromedriver"
    driver.write_text("#!/bin/sh\n")
    driver.chmod(0o755)
    monkeypatch.setattr(headless_browser, "CHROMEDRIVER", (str(driver),))
    monkeypatch.setattr(headless_browser, "CHROMIUM", (str(tmp_path / "no-chromium"),))
    assert headless_browser.browser_problem() == (
        "chromium not installed: sudo apt-get install -y chromium chromium-driver"
    )
    monkeypatch.setattr(headless_browser, "CHROMEDRIVER", (str(tmp_path / "no-chromedriver"),))
    assert headless_browser.browser_problem() == (
        "chromium and chromedriver not installed: sudo apt-get install -y chromium chromium-driver"
    )
    monkeypatch.delenv(required_service.REQUIRE_SERVICES_VAR, raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium chromium-driver"):
        headless_browser.require_browser()
    monkeypatch.setenv(required_service.REQUIRE_SERVICES_VAR, "1")
    with pytest.raises(pytest.fail.Exception, match="ROUTER_REQUIRE_SERVICES is set"):
        headless_browser.require_browser()


def test_estimates_read_one_checkpoint_when_decisions_come_from_two() -> None:
    # After a hot refit the store holds two policies' decisions: the page estimates the serving one, as
    # `router-train feedback --checkpoint-sha` does, and says how many outcomes it left out.
    records = _records(["good-model", "other-model"], mixed=True)
    kwargs = dict(router="r", pool=["good-model", "other-model"], now=datetime(2026, 12, 2, tzinfo=UTC))
    d = dashboard(records, serving_sha256="ab" * 32, estimate=default_estimates, **kwargs)  # type: ignore[arg-type]
    assert d.estimated_sha256 == "ab" * 32 and d.other_checkpoints == 16
    assert d.estimates[0].tasks == 8
    old = dashboard(records, serving_sha256="cd" * 32, estimate=default_estimates, **kwargs)  # type: ignore[arg-type]
    assert old.estimated_sha256 == HOSTILE and old.other_checkpoints == 8  # the newest with outcomes
    assert "8 outcome(s) of other checkpoints left out" in render(old)
