"""The repo's `./pants` launcher passes Ctrl-C on as exit 130 (issue 41, item 7): Pants' client turns a
SIGINT into `Interrupted by user.` and exit 1, so the launcher runs it as a child and maps an interrupted,
failed run to 130. Tested on the launcher's own function (`run_interruptible`, defined when the launcher
is sourced) with a fake command that behaves as Pants' client does; Pants itself is never started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[3] / "pants"

# "ready" is printed inside the `try`: the test sends SIGINT as soon as it reads it, and a signal that
# landed between the print and the `try` would kill the fake with a traceback instead (seen in CI).
FAKE_PANTS = """
import sys, time
try:
    print("ready", flush=True)
    time.sleep(30)
except KeyboardInterrupt:
    print("Interrupted by user.", file=sys.stderr, flush=True)
    sys.exit(int(sys.argv[1]))
sys.exit(3)
"""


def _start(exit_on_interrupt: int) -> subprocess.Popen[str]:
    # A session of its own: SIGINT goes to the whole group, as a terminal's Ctrl-C does.
    script = 'source "$1"; run_interruptible "${@:2}"'
    return subprocess.Popen(
        ["bash", "-c", script, "_", str(LAUNCHER), sys.executable, "-c", FAKE_PANTS, str(exit_on_interrupt)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, str]:
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - start < 5.0  # far below the fake's 30 s: nothing waited it out
    return proc.returncode, err


def test_ctrl_c_through_the_launcher_exits_130() -> None:
    rc, err = _interrupt(_start(exit_on_interrupt=1))
    assert rc == 130 and "Interrupted by user." in err


def test_a_run_that_ends_well_after_ctrl_c_keeps_its_0() -> None:
    rc, _ = _interrupt(_start(exit_on_interrupt=0))
    assert rc == 0


def test_without_ctrl_c_the_exit_status_passes_through() -> None:
    script = 'source "$1"; run_interruptible "${@:2}"'
    for code in (0, 1, 2, 7):
        cmd = [sys.executable, "-c", f"import sys; sys.exit({code})"]
        done = subprocess.run(["bash", "-c", script, "_", str(LAUNCHER), *cmd], timeout=30, check=False)
        assert done.returncode == code
