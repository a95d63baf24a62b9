"""No function in package code is over 80 lines (the project's rule): every module under packages/*/src is
parsed with `ast` (nothing is imported) and each function's span, decorators through its last line,
measured. The benchmark scripts' `main`s (packages/train/benchmarks) are the one exception class
(docs/development.md): a script that prints figures, not package code."""

from __future__ import annotations

import ast
from pathlib import Path

MAX_LINES = 80
"""The longest a function in package code may be, in source lines."""

ROOT = Path(__file__).resolve().parents[3]
"""The repository root (this file is packages/train/tests/...)."""


def _long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            length = node.end_lineno - first + 1
            if length > MAX_LINES:
                out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_no_function_in_package_code_is_over_80_lines() -> None:
    sources = sorted(ROOT.glob("packages/*/src/**/*.py"))
    assert len(sources) > 100  # the scan sees the three packages' modules
    long = [f for path in sources for f in _long_functions(path)]
    assert not long, "split these (at most 80 lines each):\n" + "\n".join(long)


def test_the_scan_catches_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    probe = tmp_path / "probe.py"
    probe.write_text(
        f"def short():\n    return 1\n\n\n@staticmethod\ndef long():\n{body}\n", encoding="utf-8"
    )
    assert _long_functions(probe, tmp_path) == ["probe.py:6 long (82 lines)"]
