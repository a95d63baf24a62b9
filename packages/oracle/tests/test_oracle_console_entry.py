"""The console entry points catch Ctrl-C while the CLI is still importing: one line, exit 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from router_oracle.infra import console_entry  # run by the subprocess; imported so Pants stages it


def test_ctrl_c_while_the_cli_imports_is_one_line(tmp_path: Path) -> None:
    # A stand-in CLI whose import takes long (the real ones take seconds on a busy machine).
    (tmp_path / "slow_cli.py").write_text("import time\ntime.sleep(30)\ndef main() -> int:\n    return 0\n")
    script = (
        f"import sys; from {console_entry.__name__} import run; "
        "sys.exit(run('slow_cli:main', 'router-oracle'))"
    )
    path = os.pathsep.join([str(tmp_path), *(os.path.abspath(p) for p in sys.path if p)])
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
    )
    time.sleep(1.0)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.splitlines() == ["router-oracle: interrupted; no output written"], err
    assert time.monotonic() - sent < 2


def _blas_threads(tmp_path: Path, extra_env: dict[str, str]) -> int:
    """The BLAS thread count a stand-in CLI sees once numpy is loaded, started through `run`."""
    (tmp_path / "blas_cli.py").write_text(
        "import numpy\n"
        "from threadpoolctl import threadpool_info\n"
        "def main() -> int:\n"
        "    print(max(i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'))\n"
        "    return 0\n"
    )
    script = (
        f"import sys; from {console_entry.__name__} import run; "
        "sys.exit(run('blas_cli:main', 'router-oracle'))"
    )
    path = os.pathsep.join([str(tmp_path), *(os.path.abspath(p) for p in sys.path if p)])
    env = {k: v for k, v in os.environ.items() if k not in console_entry.ONE_BLAS_THREAD}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": path, **extra_env},
        timeout=60,
        check=True,
    )
    return int(out.stdout.strip())


def test_the_clis_run_blas_on_one_thread_unless_the_user_sets_a_count(tmp_path: Path) -> None:
    # One thread: faster on these small matrices, and a fit's digits do not depend on the core count.
    assert _blas_threads(tmp_path, {}) == 1
    assert _blas_threads(tmp_path, {"OPENBLAS_NUM_THREADS": "2"}) == 2
