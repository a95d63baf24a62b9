"""No import cycle between the three packages' modules, none between the sub-packages of one package, and
no first-party import hidden in a function.

Every module of router_oracle, router_frontier_rl and router_train is parsed with `ast` (nothing is
imported): an edge for each import anywhere in it, `TYPE_CHECKING` blocks included (a cycle kept
importable by one is still a cycle), and one to each parent package whose `__init__` it runs. The
package-level graph collapses each sub-package (`router_train.local`, `router_train.irt`, ...) into one
node, each top-level module staying its own: `local` importing `irt` while `irt` imports `local` is a
cycle there even when no module of either imports back the module that imported it. Only the heavy
third-party imports in LAZY_IMPORTS may sit in a function. `route` and `serve` reach no trainer, fitter or
evaluation module (`FIT_OR_EVALUATE`), on the parsed graph and in a fresh process.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import router_frontier_rl
import router_oracle
import router_train

LAZY_IMPORTS = {
    ("router_train.evaluate.plot", "matplotlib"): "the PNG only; `--no-plot` and most tests never load it",
    ("router_train.offpolicy.replay_plot", "matplotlib"): "replay's PNG only, with `--plot`",
    ("router_train.offpolicy.floor_replay_plot", "matplotlib"): "the floor bench's PNG only, `--plot`",
    ("router_train.scoring.baselines", "sklearn"): "the TF-IDF classifiers; most scoring fits none",
    ("router_train.evaluate.forked", "multiprocessing"): "only when fits run in parallel",
    ("router_frontier_rl.repo_access", "verifiers"): "the harness class, only for repo_access tasks",
    ("router_train.hosted.self_hosted", "uv"): "the bundled uv binary, only when none is on PATH",
    ("router_frontier_rl.prompt", "verifiers"): "few-shot messages only; `route`/`serve` never build them",
    ("router_train.chat_endpoint", "openai"): "an endpoint's client only; `route`/`serve` with a checkpoint",
    ("router_train.text_features", "sklearn"): "a hand-made vocabulary's refusal only; the analyzer is ours",
    ("router_train.local.features", "sklearn"): "the `hashed` text mode only; `tfidf` reads none",
    ("router_train.irt.model", "scipy"): "scipy.optimize's L-BFGS when fitting; routing reads fitted params",
}
"""(module, top-level package it imports inside a function) -> why that import is lazy."""


PACKAGES = {
    p.__name__: Path(str(p.__file__)).parent for p in (router_oracle, router_frontier_rl, router_train)
}
"""Each first-party package's import name -> its directory."""


def _modules(packages: dict[str, Path]) -> dict[str, Path]:
    modules = {}
    for name, root in packages.items():
        for path in sorted(root.rglob("*.py")):
            parts = [name, *path.relative_to(root).with_suffix("").parts]
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _graph(packages: dict[str, Path] = PACKAGES) -> tuple[dict[str, set[str]], list[str]]:
    """Edges between the modules of `packages`, and the function-level imports that are not allowed."""
    modules = _modules(packages)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    hidden = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        in_function = {
            id(node)
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(f)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, up level - 1
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            for name in names:
                parts = name.split(".")
                targets = {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules.keys()
                edges[module] |= {t for t in targets if t != module and not module.startswith(t + ".")}
                lazy_ok = not targets and (module, parts[0]) in LAZY_IMPORTS
                if id(node) in in_function and not lazy_ok:
                    hidden.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return edges, sorted(set(hidden))


def _cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import cycle (its modules, the first repeated at the end), or [] when there is none."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str]:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return []
        path.append(node)
        for child in sorted(edges[node]):
            if found := visit(child):
                return found
        path.pop()
        done.add(node)
        return []

    for root in sorted(edges):
        if found := visit(root):
            return found
    return []


def _package_graph(edges: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """`edges` between the sub-packages and top-level modules of `package`: A -> B when any module in A
    imports any module in B (the package's own `__init__`, which every module runs, is no node)."""

    def node(module: str) -> str | None:
        parts = module.split(".")
        return ".".join(parts[:2]) if parts[0] == package and len(parts) > 1 else None

    graph: dict[str, set[str]] = {}
    for module, targets in edges.items():
        if (a := node(module)) is not None:
            reached = {node(t) for t in targets}
            graph.setdefault(a, set()).update(b for b in reached if b is not None and b != a)
    return graph


def test_no_import_cycle_between_modules() -> None:
    edges, _ = _graph()
    assert len(edges) > 90  # every module of the three packages was found
    assert _cycle(edges) == []


def test_no_import_cycle_between_sub_packages() -> None:
    edges, _ = _graph()
    for package in PACKAGES:
        assert _cycle(_package_graph(edges, package)) == [], package
    train = _package_graph(edges, "router_train")
    assert {"router_train.local", "router_train.irt", "router_train.checkpoint_io"} <= train.keys()
    # every kind saves and reads its checkpoint through the one shared module, none through another kind's
    for kind in ("local", "irt", "anypool", "route"):
        assert "router_train.checkpoint_io" in train[f"router_train.{kind}"], kind


def test_no_function_level_import_of_first_party_code() -> None:
    assert _graph()[1] == []


def _reached(edges: dict[str, set[str]], roots: list[str]) -> set[str]:
    """Every module importing `roots` runs (their transitive imports, roots included)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(edges[module])
    return seen


FIT_OR_EVALUATE = {
    "router_train.evaluate": "the evaluation (folds, reports, plots)",
    "router_train.evaluate_anypool": "the any-pool evaluation",
    "router_train.fitting": "the router kinds' fitting registry",
    "router_train.local.trainer": "the local GRPO trainer",
    "router_train.local.grpo": "the GRPO step",
    "router_train.local.grpo_run": "the GRPO run loop",
    "router_train.local.kernels": "the GRPO step's compiled loops (numba)",
    "router_train.local.lockstep": "the lockstep trainings",
    "router_train.local.row_batch": "a GRPO step's row batches",
    "router_train.local.step_metrics": "a GRPO step's metrics",
    "router_train.local.fitter": "the local router as evaluate's fitter",
    "router_train.local.heldout": "the local trainer's end-of-run summary",
    "router_train.anypool.trainer": "the any-pool trainer",
    "router_train.anypool.run": "the `local-anypool` run",
    "router_train.anypool.heldout": "the any-pool run's end-of-run check",
    "router_train.irt.fitter": "the IRT router as evaluate's fitter",
    "router_train.irt.fit_command": "`router-train fit irt`",
    "router_train.irt.refit": "the refit from traffic",
    "router_train.irt.shared_fit": "evaluate-anypool's partition-shared IRT fit",
    "router_train.scoring.fitter": "evaluate's fitter protocol",
    "router_train.scoring.baseline_fitter": "the learned baselines as evaluate's fitter",
    "router_train.offpolicy.replay": "the deployment replay (refits)",
}
"""What routing and serving never load (issue 54, item 3): module or package -> what it is. Each trains,
fits or evaluates; `route.kinds` holds what routes a checkpoint, `fitting` what fits one."""

SERVING = ("router_train.route", "router_train.serve", "router_train.dashboard")
"""The packages a serving process runs whole: routing, the proxy, the dashboard serve builds in."""

SERVING_MODULES = (
    "router_train.commands.route",
    "router_train.commands.serve",
    "router_train.offpolicy.estimators",
    "router_train.offpolicy.from_log",
    "router_train.offpolicy.summary",
)
"""The other modules `route` and `serve` may import: their commands, and the off-policy estimates the
dashboard shows (`offpolicy.replay` and `shift` serve `feedback`, not `serve`)."""


def _forbidden(modules: set[str]) -> list[str]:
    """The modules of `modules` that are, or are in, an entry of `FIT_OR_EVALUATE`."""
    return sorted(m for m in modules for f in FIT_OR_EVALUATE if m == f or m.startswith(f + "."))


def _serving_roots(edges: dict[str, set[str]]) -> list[str]:
    return [m for m in edges if m in SERVING_MODULES or any(m == p or m.startswith(p + ".") for p in SERVING)]


def test_routing_and_serving_import_no_trainer_fitter_or_evaluation() -> None:
    # `route` and `serve` load a checkpoint through `route.kinds` and score it with `scoring`; what fits a
    # kind (`fitting`, the trainers, evaluate's fitters) and the evaluation stay out of a serving process.
    edges, _ = _graph()
    roots = _serving_roots(edges)
    assert {"router_train.route.kinds", "router_train.commands.serve", "router_train.dashboard"} <= set(roots)
    reached = _reached(edges, roots)
    assert "router_train.scoring.baseline_scores" in reached and "router_train.local.checkpoint" in reached
    assert _forbidden(reached) == []
    # every entry names a module or package that exists
    assert [f for f in FIT_OR_EVALUATE if f not in edges] == []


def test_the_serving_check_finds_a_trainer_reached_through_a_package_init() -> None:
    # `route.kinds.local` reading `local.checkpoint` runs `local/__init__`: were it to re-export the
    # trainer again, the check would see it.
    edges, _ = _graph()
    edges = {**edges, "router_train.local": edges["router_train.local"] | {"router_train.local.trainer"}}
    reached = _reached(edges, _serving_roots(edges))
    assert "router_train.local.trainer" in _forbidden(reached)
    assert "router_train.local.kernels" in _forbidden(reached)


SERVING_PROCESS = """
import sys
import router_train.commands.route, router_train.commands.serve, router_train.serve
from router_train.route import CheckpointSpec, TaskInput, load_router
router = load_router(CheckpointSpec(checkpoint=sys.argv[1]))
router.route(TaskInput(instance_id="a__b-1", repo="a/b", problem_statement="It breaks."))
print(" ".join(sorted(m for m in sys.modules if m.startswith(("router_train", "numba", "sklearn")))))
"""


def test_a_serving_process_loads_no_trainer_fitter_or_evaluation(grpo_checkpoint: Path) -> None:
    # The same in a fresh interpreter, after routing a task: what a module imports in a function, or by
    # name (the CLI's commands), is counted too.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", SERVING_PROCESS, str(grpo_checkpoint)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "router_train.route.kinds.local" in loaded
    assert _forbidden(loaded) == [] and "numba" not in loaded
    # nor scikit-learn (with scipy.stats and pandas, most of the start): a TF-IDF checkpoint reads none
    assert "sklearn" not in loaded


def test_the_reach_follows_imports_transitively() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a"}}
    assert _reached(edges, ["a"]) == {"a", "b", "c"}


def test_the_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def _tree(root: Path, files: dict[str, str]) -> dict[str, Path]:
    """Write `files` (path -> source) under `root`: a package `pkg` to parse."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return {"pkg": root / "pkg"}


SUB_PACKAGE_CYCLE = {
    "pkg/__init__.py": "",
    "pkg/top.py": "import pkg.a.x\n",
    "pkg/a/__init__.py": "",
    "pkg/a/x.py": "from pkg.b import y\n",
    "pkg/a/w.py": "",
    "pkg/b/__init__.py": "",
    "pkg/b/y.py": "",
    "pkg/b/z.py": "from ..a.w import THING\n",
}
"""`a.x` imports `b.y` and `b.z` imports `a.w`: no module imports back, yet `a` and `b` import each other."""


def test_the_check_finds_a_cycle_between_sub_packages_without_one_between_modules(tmp_path: Path) -> None:
    edges, hidden = _graph(_tree(tmp_path / "cycle", SUB_PACKAGE_CYCLE))
    assert hidden == [] and edges["pkg.b.z"] == {"pkg.a", "pkg.a.w"}  # the relative import resolved
    assert _cycle(edges) == []
    packages = _package_graph(edges, "pkg")
    assert packages == {"pkg.top": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    assert _cycle(packages) == ["pkg.a", "pkg.b", "pkg.a"]
    # without `b.z`'s import the same tree has none
    edges, _ = _graph(_tree(tmp_path / "acyclic", {**SUB_PACKAGE_CYCLE, "pkg/b/z.py": ""}))
    assert _cycle(_package_graph(edges, "pkg")) == []
