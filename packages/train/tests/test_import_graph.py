"""The three packages' module-level import graph has no cycle, and no first-party import hides in a function.

Every module of router_oracle, router_frontier_rl and router_train is parsed with `ast` (nothing is
imported): an edge for each import anywhere in it, `TYPE_CHECKING` blocks included (a cycle kept
importable by one is still a cycle), plus one to each parent package whose `__init__` the import
runs. A function-level import is allowed only for the heavy third-party libraries in LAZY_IMPORTS.
"""

from __future__ import annotations

import ast
from pathlib import Path

import router_frontier_rl
import router_oracle
import router_train

PACKAGES = (router_oracle, router_frontier_rl, router_train)

LAZY_IMPORTS = {
    ("router_train.evaluate.plot", "matplotlib"): "the PNG only; `--no-plot` and tests skip loading it",
    ("router_train.scoring.baselines", "sklearn"): "the TF-IDF classifiers; most scoring never fits one",
    ("router_train.evaluate.forked", "multiprocessing"): "only when fits run in parallel",
    ("router_frontier_rl.repo_access", "verifiers"): "the harness class, only for repo_access tasks",
}
"""(module, top-level package it imports inside a function) -> why that import is lazy."""


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            parts = [package.__name__, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, *([base] if base else [])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    """Edges between first-party modules, and the function-level imports that are not allowed."""
    modules = _modules()

    def known(name: str) -> str | None:
        parts = name.split(".")
        while parts and ".".join(parts) not in modules:
            parts.pop()
        return ".".join(parts) or None

    edges: dict[str, set[str]] = {m: set() for m in modules}
    hidden: list[str] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        in_function = {
            id(node)
            for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(function)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported_names(node, module, path.name == "__init__.py"):
                target = known(name)
                if target is not None:
                    parts = target.split(".")
                    # importing a.b.c runs a/__init__ and a/b/__init__ first
                    for i in range(1, len(parts) + 1):
                        parent = ".".join(parts[:i])
                        if parent in modules and not module.startswith(parent + "."):
                            edges[module].add(parent)
                lazy_ok = target is None and (module, name.split(".")[0]) in LAZY_IMPORTS
                if id(node) in in_function and not lazy_ok:
                    hidden.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    edges = {m: {t for t in ts if t != m} for m, ts in edges.items()}
    return edges, sorted(set(hidden))


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_modules() -> None:
    edges, _ = _graph()
    assert len(edges) > 90  # every module of the three packages was found
    assert _cycles(edges) == []


def test_no_function_level_import_of_first_party_code() -> None:
    _, hidden = _graph()
    assert hidden == []


def test_the_check_sees_a_cycle_and_a_hidden_import() -> None:
    # The check itself can fail: a two-module cycle, and one kept importable by a TYPE_CHECKING block.
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    tree = ast.parse("if TYPE_CHECKING:\n    from router_train.local import x\n")
    names = _imported_names(tree.body[0].body[0], "router_train.evaluate.run", False)  # type: ignore[attr-defined]
    assert names[0] == "router_train.local"
