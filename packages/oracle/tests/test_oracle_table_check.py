"""The one table check (`table_check.check_table`): run by `load_table`, `router-oracle stats`, the build."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from router_oracle.build import build_table
from router_oracle.cli import main
from router_oracle.pool_file import load_pool
from router_oracle.table import Pool, TableError, dumps_table
from router_oracle.table_check import check_table, load_table, loads_table
from router_oracle.tie_rule import pick_for_task

Doc = dict[str, Any]


@pytest.fixture(scope="module")
def doc() -> Doc:
    """The bash-only table's first 40 tasks, as plain JSON (a valid table)."""
    d: Doc = json.loads(dumps_table(build_table("bash-only")))
    d["tasks"] = d["tasks"][:40]
    return d


def _missing_model(d: Doc) -> str:
    del d["tasks"][0]["per_model"]["gpt-5.2-high"]
    return "task astropy__astropy-12907: per_model lacks pool model(s) ['gpt-5.2-high']"


def _extra_model(d: Doc) -> str:
    d["tasks"][0]["per_model"]["extra-model"] = d["tasks"][0]["per_model"]["gpt-5.2-high"]
    return "task astropy__astropy-12907: per_model has model(s) ['extra-model'] that are not in the pool"


def _wrong_oracle(d: Doc) -> str:
    t = d["tasks"][0]
    t["oracle"] = next(m for m in t["per_model"] if m != t["oracle"])
    return f"task astropy__astropy-12907: stored oracle {t['oracle']!r}"


def _ties_to_smallest_id(d: Doc) -> str:
    # A plausible other rule (ties to the smallest id, ignoring cost): not the project's rule.
    t = next(t for t in d["tasks"] if len(t["best"]) > 1 and t["oracle"] != min(t["best"]))
    t["oracle"] = min(t["best"])
    return f"task {t['instance_id']}: stored oracle {t['oracle']!r}"


def _wrong_all_failed(d: Doc) -> str:
    t = next(t for t in d["tasks"] if not t["all_failed"])
    t["all_failed"] = True
    return f"task {t['instance_id']}: stored oracle {t['oracle']!r} (best {t['best']}, all_failed True)"


def _wrong_best(d: Doc) -> str:
    t = next(t for t in d["tasks"] if len(t["best"]) > 1)
    t["best"] = [t["oracle"]]
    return f"task {t['instance_id']}: stored oracle"


def _duplicate_task(d: Doc) -> str:
    d["tasks"].append(copy.deepcopy(d["tasks"][5]))
    return f"task {d['tasks'][5]['instance_id']}: duplicate task id (tasks[5] and tasks[40])"


def _no_tasks(d: Doc) -> str:
    d["tasks"] = []
    return "the table has no tasks"


def _one_model(d: Doc) -> str:
    keep = d["pool"]["models"][0]["id"]
    d["pool"]["models"] = d["pool"]["models"][:1]
    for t in d["tasks"]:
        t["per_model"] = {keep: t["per_model"][keep]}
        t.update(oracle=keep, best=[keep], all_failed=t["per_model"][keep]["resolve_rate"] == 0)
    return f"pool 'bash-only' has 1 model ({keep}); a router needs at least 2 to choose between"


BREAKS: list[Callable[[Doc], str]] = [
    _missing_model,
    _extra_model,
    _wrong_oracle,
    _ties_to_smallest_id,
    _wrong_all_failed,
    _wrong_best,
    _duplicate_task,
    _no_tasks,
    _one_model,
]


@pytest.mark.parametrize("breaks", BREAKS, ids=[b.__name__.strip("_") for b in BREAKS])
def test_load_table_and_stats_refuse_an_inconsistent_table_with_one_line(
    doc: Doc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, breaks: Callable[[Doc], str]
) -> None:
    broken = copy.deepcopy(doc)
    problem = breaks(broken)
    monkeypatch.chdir(tmp_path)
    Path("bad.json").write_text(json.dumps(broken, indent=1))
    with pytest.raises(TableError) as exc:
        load_table("bad.json")
    assert str(exc.value).startswith(f"bad.json: {problem}")
    with pytest.raises(TableError, match=r"^<text>: "):
        loads_table(json.dumps(broken), origin="<text>")
    # `router-oracle stats` says the very same line: one check, shared.
    assert main(["stats", "bad.json"]) == 2
    err = capsys.readouterr().err
    assert err == f"router-oracle: error: {exc.value}\n"


def test_a_valid_table_passes_and_the_picks_are_the_rules(doc: Doc) -> None:
    table = loads_table(json.dumps(doc))
    picks = check_table(table, origin="t")
    assert picks == [pick_for_task(table.pool, table.rule, t.per_model) for t in table.tasks]


def test_build_refuses_a_pool_of_one_model(tmp_path: Path) -> None:
    pool = load_pool("bash-only")
    one = Pool(name="solo", models=pool.models[:1])
    with pytest.raises(TableError, match="pool 'solo' has 1 model"):
        build_table(one, output=tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


def test_a_price_rule_without_prices_is_a_table_error_naming_the_task(doc: Doc) -> None:
    d = copy.deepcopy(doc)
    d["rule"]["tie_cost"] = "price"
    prefix = r"^t\.json: task astropy__astropy-12907: pool 'bash-only': tie_cost=price"
    with pytest.raises(TableError, match=prefix):
        loads_table(json.dumps(d), origin="t.json")
