"""Why a launch stopped: one exception class per documented exit status.

Library functions in `router_train.hosted` raise these; the one CLI runner (`router_oracle.infra.cli_runner`)
turns them into a printed line and their exit status. Each message is one line naming the flag,
file or command at fault.
"""

from __future__ import annotations

from typing import ClassVar

from router_oracle.infra.cli_runner import CommandError


class LaunchError(CommandError):
    """A launch (hosted or self-hosted) that cannot go on; `exit_code` is its documented exit status."""

    exit_code: ClassVar[int] = 1
    summary: ClassVar[str] = "launch failed"


class BadLaunchInput(LaunchError):
    """Invalid config, no usable env build, a bad --version, a runs/stage dir that is a file, a preset
    that does not fit the deployment, a --prime-rl directory that is not a prime-rl checkout."""

    exit_code = 2
    summary = "bad input (config, env build, --version, directories, --prime-rl, --nodes)"


class ToolNotFound(LaunchError):
    """`prime` (hosted) or `uv` (self-hosted) cannot be found."""

    exit_code = 3
    summary = "`prime` (hosted) or `uv` (--prime-rl) not found"


class NotLoggedIn(LaunchError):
    """`prime` has no API key, or the Prime API refuses it (401)."""

    exit_code = 4
    summary = "`prime` not logged in (no API key, or the API refused it)"


class NoRunId(LaunchError):
    """`prime train` exited 0 but printed no run id."""

    exit_code = 5
    summary = "no run id in `prime train`'s output"


class ApiUnreachable(LaunchError):
    """The Prime API could not be reached, or did not answer within the timeout."""

    exit_code = 6
    summary = "the Prime API unreachable or not answering within --timeout"


class PushRejected(LaunchError):
    """`prime env push` failed (the API refused the upload, or the package did not build)."""

    exit_code = 7
    summary = "`prime env push` rejected"


class TrainRejected(LaunchError):
    """`prime train` failed (the API refused the run), or a self-hosted `uv run rl` exited non-zero."""

    exit_code = 8
    summary = "`prime train` rejected (or, with --prime-rl, `uv run rl` failed)"


ERRORS: tuple[type[LaunchError], ...] = (
    BadLaunchInput,
    ToolNotFound,
    NotLoggedIn,
    NoRunId,
    ApiUnreachable,
    PushRejected,
    TrainRejected,
)
"""Every documented failure, in exit-status order."""


def exit_codes_help() -> str:
    """The exit statuses for `--help`, from the classes above."""
    parts = ["0 launched (or, with --dry-run, a launch would start)"]
    parts += [f"{cls.exit_code} {cls.summary}" for cls in ERRORS]
    parts.append("130 interrupted")
    return (
        "exit status: "
        + "; ".join(parts)
        + ". --dry-run exits with the status a launch would (login not checked)"
    )
