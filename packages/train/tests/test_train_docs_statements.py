"""The docs say what the code holds (issue 45, item 2): what a new router kind takes is stated once, in the
same words in docs/development.md, `route.kinds`' docstring and `RouterKind`'s, and it names the fields
`RouterKind` has and the registry `route.kinds` holds."""

from __future__ import annotations

import dataclasses
import re

from doc_commands import REPO

import router_train.route.kinds as kinds
from router_train.route.kinds.kind import RouterKind

STATEMENT_START = "A new router kind is one class and one registry line."


def _words(text: str) -> str:
    return " ".join(text.split())


def kind_statement() -> str:
    """The statement as docs/development.md gives it: its paragraph starting with `STATEMENT_START`."""
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    start = text.index(STATEMENT_START)
    return _words(text[start:].split("\n\n", 1)[0])


def test_the_router_kind_statement_is_the_same_in_the_docs_and_both_docstrings() -> None:
    statement = kind_statement()
    assert statement.startswith(STATEMENT_START)
    for where, docstring in (("route.kinds", kinds.__doc__), ("RouterKind", RouterKind.__doc__)):
        assert statement in _words(docstring or ""), (
            f"{where}'s docstring does not say docs/development.md's {statement!r}"
        )


def test_the_statement_names_what_router_kind_and_the_registry_hold() -> None:
    statement = kind_statement()
    named = re.search(r"RouterKind\(([^)]*)\)", statement)
    assert named is not None
    fields = [f.strip() for f in named.group(1).split(",")]
    declared = {f.name: f for f in dataclasses.fields(RouterKind)}
    assert set(fields) <= set(declared), f"RouterKind has no field(s) {set(fields) - set(declared)}"
    required = [n for n, f in declared.items() if f.default is dataclasses.MISSING]
    assert set(required) <= set(fields), (
        f"the statement leaves out RouterKind's required {set(required) - set(fields)}"
    )
    for name in ("KINDS", "Checkpoint"):
        assert f"`{name}`" in statement and hasattr(kinds, name)
    for kind in kinds.KINDS.values():  # the `kind` literal the statement describes
        assert kind.kind.startswith("router-train-")
