"""Ctrl-C at any moment of `router-train`: exit 130, one stderr line, no worker left, no output.

Each test starts the console entry point in a subprocess and sends it SIGINT the way a terminal does:
once while the CLI is still importing, once while `evaluate --folds 5`'s forked fold workers fit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from router_train import cli, console_entry  # run by the subprocess; imported so Pants stages them

ENTRY = f"import sys; from {console_entry.__name__} import main; sys.exit(main())"
"""What the `router-train` console script runs (packages/train/BUILD)."""


def _children(pid: int) -> set[int]:
    """Every descendant of `pid` (via /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = {int(k) for k in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += sorted(kids - found)
            found |= kids
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    assert callable(cli.main)  # the CLI the entry point loads by name
    return subprocess.Popen(
        [sys.executable, "-c", ENTRY, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # The test's own import path, absolute: the command runs in a scratch directory.
        env={**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p)},
    )


def _interrupt(proc: subprocess.Popen[str]) -> tuple[float, str]:
    """SIGINT `proc`; seconds until it exited, and its stderr."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return time.monotonic() - sent, err


def test_ctrl_c_during_start_up_is_one_line(tmp_path: Path) -> None:
    proc = _start(["evaluate", "--folds", "5", "-o", str(tmp_path / "out")], tmp_path)
    time.sleep(0.3)  # the CLI's imports take seconds: this lands inside them
    assert proc.poll() is None, "the CLI started faster than this test assumes"
    elapsed, err = _interrupt(proc)
    assert proc.returncode == 130, err
    assert err.splitlines() == ["router-train: interrupted; no output written"], err
    assert elapsed < 2
    assert not (tmp_path / "out").exists()


def test_ctrl_c_stops_forked_fold_workers_at_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _start(["evaluate", "--folds", "5", "--jobs", "2", "--no-plot", "-o", str(out)], tmp_path)
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while not workers and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
        workers = _children(proc.pid)
    assert workers, "evaluate started no fold workers"
    time.sleep(0.5)  # the fits are under way
    elapsed, err = _interrupt(proc)
    print(f"exit {proc.returncode} {elapsed:.2f} s after SIGINT")
    assert proc.returncode == 130, err
    assert err.splitlines() == ["router-train evaluate: interrupted; no output written"], err
    assert elapsed < 2
    assert not any(_alive(pid) for pid in workers)
    assert not out.exists()
