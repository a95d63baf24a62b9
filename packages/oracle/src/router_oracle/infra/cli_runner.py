"""The one CLI layer of the project: its exit codes, and the runner that turns a typed error into one line.

`router-oracle`, `router-train` (every subcommand) and the smoke job run their body through
`run_cli`; library code raises (a `ValueError` subclass naming the file or option, an `OSError`),
never prints or returns a status. It lives in the oracle package because env and train build on it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import ClassVar

from pydantic import ValidationError

from router_oracle.infra.console_entry import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from router_oracle.infra.console_entry import INTERRUPTED
from router_oracle.infra.validation_message import one_line

EXIT_OK = 0
"""Done: every output was written."""
EXIT_BAD_INPUT = 2
"""Bad input (a table, a file, a config, an option): one line on stderr, no output was written."""


class CommandError(Exception):
    """An error that carries its own documented exit status (e.g. `router-train launch`'s 3-8);
    `run_cli` prints its one-line message and returns `exit_code`."""

    exit_code: ClassVar[int] = 1
    """The exit status documented for this kind of failure."""


def bad_input(prog: str, message: object) -> int:
    """Print `PROG: MESSAGE` on stderr; the exit status of bad input."""
    print(f"{prog}: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_cli(
    body: Callable[[], int],
    *,
    prog: str,
    error_prefix: str = "",
    interrupted: str = INTERRUPTED,
) -> int:
    """Run a command's `body` and return its exit status; bad input and Ctrl-C become one stderr line.

    `PROG: ERROR_PREFIX MESSAGE` with its own status for a `CommandError`, exit 2 for a `ValueError`
    (every input error of the project is one;
    a pydantic `ValidationError` is condensed to `invalid option: ...`) or an `OSError` naming the file
    the command was pointed at; `PROG: INTERRUPTED` (exit 130) for Ctrl-C.
    """
    try:
        return int(body())
    except CommandError as exc:
        print(f"{prog}: {error_prefix}{exc}", file=sys.stderr)
        return exc.exit_code
    except ValidationError as exc:
        return bad_input(prog, f"{error_prefix}invalid option: {one_line(exc)}")
    except ValueError as exc:
        return bad_input(prog, f"{error_prefix}{exc}")
    except OSError as exc:  # a file or directory the command was pointed at cannot be used
        reason = exc.strerror or str(exc)
        return bad_input(prog, f"{error_prefix}{f'{exc.filename}: ' if exc.filename else ''}{reason}")
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return EXIT_INTERRUPTED
