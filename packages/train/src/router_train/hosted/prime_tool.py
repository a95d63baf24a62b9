"""The `prime` CLI (PyPI package `prime`, checked against 0.18.0): finding it, its login, running it.

Which `prime` runs (`find_prime`): the first `prime` on PATH, so a user's own install (say a newer
`uv tool install prime`) overrides; else the `prime` installed with router-train itself (its locked
requirement), i.e. the `prime` script in the running interpreter's environment (the scripts directory
of this venv, pex venv or installation). So after the README's set-up, `router-train launch` works
without a separate install.

Login status comes from `prime config view`, which prints the API key it would use (from
PRIME_API_KEY or ~/.prime/config.json, masked) or `Not set`, and needs no network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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


def login_status(prime: str, *, timeout: float = 60.0) -> tuple[bool, str]:
    """(logged in?, explanation) from `prime config view`."""
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


def prime_ready() -> tuple[bool, str]:
    """(ready to launch?, why not / how to fix), for the smoke job: prime is installed and logged in."""
    prime = find_prime()
    if prime is None:
        return False, NOT_FOUND
    return login_status(prime)


@dataclass
class StreamResult:
    """A finished command: its exit status and every line it printed (stdout and stderr merged)."""

    returncode: int
    """Exit status (127: the command could not be started)."""
    lines: list[str] = field(default_factory=list)
    """Every output line, without its newline, in the order printed."""


def stream(argv: Sequence[str], *, echo: Callable[[str], None] | None = None) -> StreamResult:
    """Run `argv`, echoing each output line as it arrives, and return its status and lines."""
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
            env=child_env(),
        )
    except OSError as e:
        message = f"cannot run {argv[0]}: {e}"
        emit(message)
        return StreamResult(returncode=127, lines=[message])
    with proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            lines.append(line)
            emit(line)
    return StreamResult(returncode=proc.returncode, lines=lines)


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
