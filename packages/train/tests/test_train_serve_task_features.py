"""Issue 39, item 4: `serve` with a router trained on task features. Its `[router]` table names the
features file (`task_features`, as `route --task-features`); a served task is looked up by the id the
agent sends (`x-router-task-id`), and a task the file lacks is refused with one line (HTTP 502, the proxy
keeps serving); a config without the file is refused at start. Real httpx clients against stub upstreams
on 127.0.0.1 (serve_stubs)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomli_w
from serve_stubs import log_lines, proxy_app, running_upstreams, serving, write_config

from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.split import select_tasks
from router_oracle.table_check import load_table
from router_train.cli import main
from router_train.route import RouteError, bundled_tasks
from router_train.serve import MODEL_HEADER, TASK_ID_HEADER
from router_train.task_features import write_task_features


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """A balanced TF-IDF logistic regression fitted on the bundled table's train split and two task-feature
    columns, its checkpoint, the features file, and the held-out ids (the last one without a row)."""
    base = tmp_path_factory.mktemp("serve-features")
    held_out = sorted(t.instance_id for t in select_tasks(load_table(bundled_table_path()), "eval", 0.2, 0))
    ids = sorted(bundled_tasks())
    rows: dict[str, list[float | None]] = {i: [float(k % 4), float(len(i) % 3)] for k, i in enumerate(ids)}
    features = base / "features.csv"
    write_task_features(features, ["a", "b"], {i: v for i, v in rows.items() if i != held_out[-1]})
    out = base / "fit"
    argv = ["fit", "tfidf-logreg(balanced)", "--split", "train", "--task-features", str(features)]
    assert main([*argv, "--output-dir", str(out)]) == 0
    return out / "checkpoint.json", features, held_out


def _config(path: Path, checkpoint: Path, stubs: Any, **router: Any) -> Path:
    cfg = write_config(path, checkpoint, stubs)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc["router"].update(router)
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return cfg


def _ask(url: str, issue: str, task_id: str | None) -> httpx.Response:
    body = {"model": "router", "messages": [{"role": "user", "content": issue}]}
    headers = {TASK_ID_HEADER: task_id} if task_id is not None else {}
    return httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=60)


def test_serve_routes_with_the_task_features_of_the_task_id_it_is_sent(
    tmp_path: Path, trained: tuple[Path, Path, list[str]]
) -> None:
    checkpoint, features, ids = trained
    tasks = bundled_tasks()
    pool = sorted(json.loads(checkpoint.read_text())["pool_ids"])
    with running_upstreams(pool) as stubs:
        # Without the file: refused when the proxy loads its router, naming the flag.
        with pytest.raises(RouteError, match="trained on 2 task-feature columns"):
            proxy_app(_config(tmp_path / "none.toml", checkpoint, stubs))
        # At the native point the router reads every routed task's features.
        cfg = _config(
            tmp_path / "serve.toml", checkpoint, stubs, task_features=str(features), no_safe_point=True
        )
        with serving(proxy_app(cfg)) as server:
            known = ids[0]
            ok = _ask(server.url, tasks[known].problem_statement, known)
            assert ok.status_code == 200 and ok.headers[MODEL_HEADER] in pool
            # The last task has no row, an agent's own id none either: one line each, 502.
            for task_id in (ids[-1], "job-7"):
                refused = _ask(server.url, tasks[ids[-1]].problem_statement, task_id)
                assert refused.status_code == 502, refused.text
                message = refused.json()["error"]["message"]
                assert f"no row for task {task_id!r}" in message and "\n" not in message
            # ... and the proxy keeps serving.
            again = _ask(server.url, tasks[ids[1]].problem_statement, ids[1])
            assert again.status_code == 200
    decided = [line for line in log_lines(cfg) if line.get("model")]
    assert [line["instance_id"] for line in decided] == [known, ids[1]]
