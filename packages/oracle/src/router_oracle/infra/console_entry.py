"""Console entry points that turn Ctrl-C into one line from the interpreter's first moment.

`router-oracle` and `router-train` take seconds to import (pydantic, numpy, scikit-learn, verifiers);
a Ctrl-C while they load used to print a long `KeyboardInterrupt` traceback. The entry points import
only the standard library, then load the CLI by name inside the handler, so an interrupt at any
moment ends in `PROG: interrupted; no output written` and exit 130. (The CLI is looked up by name
because importing it here, at the top, is exactly the slow part the handler must already cover.)

Before anything imports numpy, BLAS is given one thread (where the user has not chosen a number): the
matrices here are small (at most 500 tasks by a few hundred runs), where OpenBLAS's threads cost more
than they save (`router-train fit irt` 14.3 s -> 9.0 s, `evaluate --irt` with its forked fold workers
29.8 s -> 11.9 s on 2 cores; docs/benchmarks.md "Seventh pass"), and a fit's last digits would
otherwise depend on the machine's core count (the IRT checkpoint's weights did, at 1e-14).
"""

from __future__ import annotations

import importlib
import os
import sys

EXIT_INTERRUPTED = 130
"""Ctrl-C: one line on stderr; outputs are published whole or not at all, so none was half-written."""

INTERRUPTED = "interrupted; no output written"
"""What follows `PROG: ` on stderr after Ctrl-C."""

ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
"""Thread counts set before numpy loads, unless already set (OpenBLAS: numpy's and scipy's BLAS; OpenMP:
scikit-learn's)."""


def launch(target: str, prog: str) -> int:
    """Import `module:function` and run it (argv from `sys.argv`); Ctrl-C while importing or running
    becomes one stderr line and exit 130 (the CLI's own runner handles it the same way once loaded)."""
    module, _, function = target.partition(":")
    for name, value in ONE_BLAS_THREAD.items():
        os.environ.setdefault(name, value)
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
