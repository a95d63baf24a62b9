"""The repo's `./pants` launcher passes Ctrl-C on as exit 130 (issue 41, item 7): Pants' client turns a
SIGINT into `Interrupted by user.` and exit 1, so the launcher runs it as a child and maps an interrupted,
failed run to 130. A signal sent to the launcher's pid alone (a process manager's) reaches the child too,
and killing the launcher leaves no orphan (issue 44, item 8). Tested on the launcher's own function
(`run_interruptible`, defined when the launcher is sourced) with a fake command that behaves as Pants'
client does; Pants itself is never started."""

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


# The fake reports its pid, and exits 0 on SIGTERM (as a server shutting down cleanly does).
FAKE_SERVER = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(int(sys.argv[1])))
try:
    print(os.getpid(), flush=True)
    time.sleep(30)
except KeyboardInterrupt:
    print("Interrupted by user.", file=sys.stderr, flush=True)
    sys.exit(1)
sys.exit(3)
"""


def _start_server(on_term: int = 0) -> tuple[subprocess.Popen[str], int]:
    script = 'source "$1"; run_interruptible "${@:2}"'
    proc = subprocess.Popen(
        ["bash", "-c", script, "_", str(LAUNCHER), sys.executable, "-c", FAKE_SERVER, str(on_term)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def _gone(pid: int, within: float = 5.0) -> bool:
    """True once `pid` has stopped running. A child that outlived its launcher is reparented (to pid 1 or
    a subreaper), and an exited one stays a zombie until that process reaps it, which some inits do late
    (seen in CI): `kill(pid, 0)` succeeds on a zombie, so its state is read too."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (ProcessLookupError, FileNotFoundError):
            return True
        if stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}:  # zombie or dead: exited, not yet reaped
            return True
        time.sleep(0.05)
    return False


def test_sigint_to_the_launchers_pid_alone_stops_the_child_and_exits_130() -> None:
    proc, child = _start_server()
    os.kill(proc.pid, signal.SIGINT)  # the pid, not the group: as `Popen.send_signal` does
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130 and "Interrupted by user." in err
    assert _gone(child)


def test_sigterm_to_the_launcher_is_forwarded_and_its_exit_code_kept() -> None:
    for code in (0, 5):
        proc, child = _start_server(on_term=code)
        os.kill(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=10)
        assert proc.returncode == code and _gone(child)


def test_a_signal_to_the_launchers_group_reaches_the_child_once() -> None:
    proc, child = _start_server(on_term=4)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 4 and _gone(child)


def test_a_killed_launcher_leaves_no_orphan() -> None:
    proc, child = _start_server()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    try:
        assert _gone(child), "the child outlived a SIGKILLed launcher"
    finally:
        if not _gone(child, 0.1):
            os.kill(child, signal.SIGKILL)


# Reads its standard input whole and echoes it on both streams, as `route --issue -` reads the issue.
FAKE_READER = """
import sys
text = sys.stdin.read()
print(f"out:{text}", end="", flush=True)
print(f"err:{len(text)}", file=sys.stderr, flush=True)
"""


def test_standard_input_reaches_the_child() -> None:
    # issue 55, item 5: the child ran in the background, whose stdin bash makes /dev/null
    script = 'source "$1"; run_interruptible "${@:2}"'
    done = subprocess.run(
        ["bash", "-c", script, "_", str(LAUNCHER), sys.executable, "-c", FAKE_READER],
        input="the issue text\nline two\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "out:the issue text\nline two\n" and done.stderr == "err:24\n"


def test_a_closed_standard_input_reads_as_empty() -> None:
    script = 'source "$1"; run_interruptible "${@:2}" <&-'
    done = subprocess.run(
        ["bash", "-c", script, "_", str(LAUNCHER), sys.executable, "-c", FAKE_READER],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "out:", "err:0\n")
