"""The `prime` CLI (PyPI package `prime`, checked against 0.18.0): finding it, its login, running it.

Which `prime` runs (`find_prime`): the first `prime` on PATH, so a user's own install (say a newer
`uv tool install prime`) overrides; else the `prime` installed with router-train itself (its locked
requirement), i.e. the `prime` script in the running interpreter's environment (the scripts directory
of this venv, pex venv or installation). So after the README's set-up, `router-train launch` works
without a separate install.

Login status comes from `prime config view`, which prints the API key it would use (from
PRIME_API_KEY or ~/.prime/config.json, masked) or `Not set`, and needs no network; then `prime whoami`
(GET /api/v1/user/whoami, prime_cli/commands/whoami.py) asks the API whether it takes that key, so a
refused key or an unreachable API stops the launch before anything is staged or pushed.

Every command runs with a bound on its wall time: a Prime API that accepts connections but never
answers would otherwise hold the launch for prime's own timeouts (30 s a request, longer for a run).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from router_train.hosted.errors import ApiUnreachable, LaunchError, NotLoggedIn, ToolNotFound

PRIME = "prime"
INSTALL_HINT = "install the Prime CLI (`uv tool install prime` or `pip install prime`, 0.18 or newer)"
LOGIN_HINT = "run `prime login` (or export PRIME_API_KEY=<your key>)"
NOT_FOUND = f"`prime` is not on PATH nor installed beside this Python: {INSTALL_HINT}"
"""Why a launch cannot start when `find_prime` finds nothing."""

_API_KEY_ROW = re.compile(r"API Key\W+(.+?)\s*[│|]?\s*$")
_PUSHED = re.compile(r"Successfully pushed\s+([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)")
_DISPATCHED = re.compile(r"Dispatched hosted run\s+([A-Za-z0-9][\w-]*)")
_DASHBOARD = re.compile(r"(https?://\S+/dashboard/training/([A-Za-z0-9][\w-]*))")


def own_prime() -> str | None:
    """The `prime` script installed beside the running interpreter (router-train's own requirement)."""
    dirs = [Path(sysconfig.get_path("scripts")), Path(sys.executable).parent]  # not resolved: venvs
    for directory in dict.fromkeys(dirs):
        candidate = directory / PRIME
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def find_prime() -> str | None:
    """The `prime` to run: the first on PATH, else router-train's own (`own_prime`); None if neither."""
    return shutil.which(PRIME) or own_prime()


def child_env() -> dict[str, str]:
    """Environment for prime: wide rich tables (no wrapped lines to parse) and no update check."""
    env = dict(os.environ)
    env.setdefault("COLUMNS", "200")
    env.setdefault("PRIME_DISABLE_VERSION_CHECK", "1")
    return env


DEFAULT_TIMEOUT_S = 900.0
"""Default bound on one `prime` command's wall time (a push builds and uploads the package)."""

_UNREACHABLE = ("Request failed: Connect", "Request timed out", "ConnectError", "ConnectTimeout")
"""How prime 0.18.0 reports a network failure (prime_cli/core/client.py, APIClient.request)."""
_ERROR_LINE = re.compile(r"\b(Error|error|Failed|failed)\b")
_UNAUTHORIZED = "API key unauthorized"
"""prime 0.18.0's message for HTTP 401 (prime_cli/core/client.py)."""


def login_status(prime: str, *, timeout: float = 60.0) -> tuple[bool, str]:
    """(logged in?, explanation) from `prime config view` (no network)."""
    try:
        proc = subprocess.run(
            [prime, "config", "view"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=child_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"`{prime} config view` failed ({e}); is the Prime CLI installed correctly?"
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return False, f"`prime config view` exited {proc.returncode}: {tail[0]}"
    for line in proc.stdout.splitlines():
        m = _API_KEY_ROW.search(line)
        if m:
            value = m.group(1).strip(" │|")
            if not value or value.lower() == "not set":
                return False, f"prime is not logged in: {LOGIN_HINT}"
            return True, f"prime is logged in (API key {value})"
    return False, "could not read the API key row of `prime config view`; check `prime config view` by hand"


def check_login(prime: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> str:
    """Raise unless prime has a key (`prime config view`) that the API accepts (`prime whoami`).

    Returns the explanation line. Raises NotLoggedIn (no key, or 401) or ApiUnreachable.
    """
    logged_in, why = login_status(prime)  # no network: its own bound, not --timeout
    if not logged_in:
        raise NotLoggedIn(why)
    who = stream([prime, "whoami"], echo=lambda _line: None, timeout=timeout)
    if who.returncode != 0:
        raise failure(who, "prime whoami", otherwise=NotLoggedIn, hint=LOGIN_HINT)
    return why


def failure(result: StreamResult, what: str, *, otherwise: type[LaunchError], hint: str = "") -> LaunchError:
    """The error of a failed `prime` command: timed out or no connection -> ApiUnreachable; 401 ->
    NotLoggedIn; anything else -> `otherwise`, with prime's last error line."""
    if result.timed_out:
        return ApiUnreachable(
            f"`{what}` got no answer from the Prime API within {result.timeout:g} s (--timeout)"
        )
    text = "\n".join(result.lines)
    # prime's first error line is the cause (`env push` adds "Unexpected error: 1" after it).
    last = next(
        (line.strip() for line in result.lines if _ERROR_LINE.search(line)),
        next((line.strip() for line in reversed(result.lines) if line.strip()), "no output"),
    )
    if any(marker in text for marker in _UNREACHABLE):
        return ApiUnreachable(f"`{what}` could not reach the Prime API: {last}")
    if _UNAUTHORIZED in text:
        return NotLoggedIn(f"`{what}`: the Prime API refused the API key: {LOGIN_HINT}")
    suffix = f"; {hint}" if hint else ""
    return otherwise(f"`{what}` failed (exit {result.returncode}): {last}{suffix}")


def require_prime() -> str:
    """The `prime` to run, or ToolNotFound."""
    prime = find_prime()
    if prime is None:
        raise ToolNotFound(NOT_FOUND)
    return prime


def prime_ready() -> tuple[bool, str]:
    """(ready to launch?, why not / how to fix), for the smoke job: prime is installed and logged in
    (`prime config view` only: no network)."""
    prime = find_prime()
    if prime is None:
        return False, NOT_FOUND
    return login_status(prime)


@dataclass
class StreamResult:
    """A finished command: its exit status and every line it printed (stdout and stderr merged)."""

    returncode: int
    """Exit status (127: the command could not be started; -9: killed at the timeout)."""
    lines: list[str] = field(default_factory=list)
    """Every output line, without its newline, in the order printed."""
    timed_out: bool = False
    """Killed because it ran longer than `timeout`."""
    timeout: float = 0.0
    """The bound it ran under, in seconds."""


def stream(
    argv: Sequence[str],
    *,
    echo: Callable[[str], None] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> StreamResult:
    """Run `argv`, echoing each output line as it arrives, and return its status and lines; kill it
    (and its children) after `timeout` seconds (None: no bound)."""
    emit = echo or (lambda line: (sys.stdout.write(line + "\n"), sys.stdout.flush()))
    lines: list[str] = []
    try:
        proc = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # No prompts: prime is run with -y, and a question nobody sees would hang the launch.
            stdin=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env=env if env is not None else child_env(),
            cwd=cwd,
            start_new_session=True,  # its own process group: the timeout kills uv's children too
        )
    except OSError as e:
        message = f"cannot run {argv[0]}: {e}"
        emit(message)
        return StreamResult(returncode=127, lines=[message], timeout=timeout or 0.0)
    expired = threading.Event()

    def kill() -> None:
        expired.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)

    timer = threading.Timer(timeout, kill) if timeout is not None else None
    if timer is not None:
        timer.start()
    try:
        with proc:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.rstrip("\n")
                lines.append(line)
                emit(line)
    finally:
        if timer is not None:
            timer.cancel()
    return StreamResult(
        returncode=proc.returncode, lines=lines, timed_out=expired.is_set(), timeout=timeout or 0.0
    )


def parse_pushed_slug(lines: Sequence[str]) -> str | None:
    """`owner/name` from `prime env push`'s "Successfully pushed owner/name" line."""
    for line in lines:
        m = _PUSHED.search(line)
        if m:
            return m.group(1)
    return None


def parse_run_id(lines: Sequence[str]) -> tuple[str | None, str | None]:
    """(run id, dashboard URL) from `prime train`'s "Dispatched hosted run ID" / monitor lines."""
    run_id = url = None
    for line in lines:
        if run_id is None and (m := _DISPATCHED.search(line)):
            run_id = m.group(1)
        if url is None and (d := _DASHBOARD.search(line)):
            url = d.group(1)
            run_id = run_id or d.group(2)
    return run_id, url
