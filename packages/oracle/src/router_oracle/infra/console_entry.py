"""Console entry points that turn Ctrl-C into one line from the interpreter's first moment.

`router-oracle` and `router-train` take seconds to import (pydantic, numpy, scikit-learn, verifiers);
a Ctrl-C while they load used to print a long `KeyboardInterrupt` traceback. The entry points import
only the standard library, then load the CLI by name inside the handler, so an interrupt at any
moment ends in `PROG: interrupted; no output written` and exit 130. (The CLI is looked up by name
because importing it here, at the top, is exactly the slow part the handler must already cover.)
"""

from __future__ import annotations

import importlib
import os
import sys

EXIT_INTERRUPTED = 130
"""Ctrl-C: one line on stderr; outputs are published whole or not at all, so none was half-written."""

INTERRUPTED = "interrupted; no output written"
"""What follows `PROG: ` on stderr after Ctrl-C."""


def launch(target: str, prog: str) -> int:
    """Import `module:function` and run it (argv from `sys.argv`); Ctrl-C while importing or running
    becomes one stderr line and exit 130 (the CLI's own runner handles it the same way once loaded)."""
    module, _, function = target.partition(":")
    try:
        return int(getattr(importlib.import_module(module), function)())
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: {INTERRUPTED}\n")
        return EXIT_INTERRUPTED


def run(target: str, prog: str) -> int:
    """`launch`, as a console script: after Ctrl-C the process ends at once.

    The interpreter's teardown of the loaded libraries takes seconds on a busy machine, and by now
    every `finally` has run (temporary outputs are gone), so an interrupted command skips it."""
    code = launch(target, prog)
    if code == EXIT_INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def main() -> int:
    """The `router-oracle` console script."""
    return run("router_oracle.cli:main", "router-oracle")
