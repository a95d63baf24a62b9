"""The docs say what the code holds (issue 45, item 2): what a new router kind takes is stated once, in the
same words in docs/development.md, `route.kinds`' docstring and `RouterKind`'s, and it names the fields
`RouterKind` and `Fit` have and the registries `route.kinds` and `fitting` hold (issue 54, item 3: one
class and a registry line on each side, routing and fitting)."""

from __future__ import annotations

import dataclasses
import re

from doc_commands import REPO

import router_train.fitting as fitting
import router_train.route.kinds as kinds
from router_train.fitting.fit import Fit
from router_train.route.kinds.kind import RouterKind

STATEMENT_START = "A new router kind is one class and a registry line on each side"


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


def test_the_statement_names_what_router_kind_fit_and_the_registries_hold() -> None:
    statement = kind_statement()
    for entry in (RouterKind, Fit):  # each side's entry: its required fields named in the call, in order
        named = re.search(rf"{entry.__name__}\(([^)]*)\)", statement)
        assert named is not None, entry.__name__
        fields = [f.strip() for f in named.group(1).split(",")]
        declared = {f.name: f for f in dataclasses.fields(entry)}
        assert set(fields) <= set(declared), f"{entry.__name__} has no field(s) {set(fields) - set(declared)}"
        required = [n for n, f in declared.items() if f.default is dataclasses.MISSING]
        assert fields == required, f"the statement says {entry.__name__}({', '.join(fields)}): {required}"
    optional = [f.name for f in dataclasses.fields(Fit) if f.default is not dataclasses.MISSING]
    for name in ("fitters", "margins", "refit"):
        assert name in optional and f"`{name}`" in statement
    for name in ("KINDS", "Checkpoint"):
        assert f"`{name}`" in statement and hasattr(kinds, name)
    assert "`FITS`" in statement and list(fitting.FITS) == list(kinds.KINDS)
    for kind in kinds.KINDS.values():  # the `kind` literal the statement describes
        assert kind.kind.startswith("router-train-")
