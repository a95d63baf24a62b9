"""Tests that need a real PostgreSQL: a throwaway cluster from Debian's `postgresql` binaries.

The one definition of when such a test skips and when it fails (as `packages/env/tests/system_tools.py`
does for bubblewrap). A newcomer's `./pants test ::` passes without PostgreSQL: each of these tests skips,
its reason naming the install line. CI (`.ci/run`) sets $ROUTER_REQUIRE_SERVICES (pants.toml passes it into
Pants' test sandboxes): there a missing PostgreSQL fails these tests instead of skipping them.

The cluster is made with `initdb` in a temporary directory, listens on 127.0.0.1 only on a free port, trusts
local connections (a test database, nothing else on it), and is stopped (`pg_ctl stop -m immediate`) and
removed at the end. As root, its binaries run as the `postgres` user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from required_service import skip_or_fail

POSTGRES_INSTALL = "sudo apt-get install -y postgresql"
"""The install line a skipped PostgreSQL test names (Debian)."""

START_TIMEOUT_S = 60
"""Seconds `pg_ctl start` may take (a busy 2-core machine)."""


def _bin_dir() -> Path | None:
    # Executable ones only: a file that cannot be run is no PostgreSQL (`.ci/newcomer_tests.sh` hides
    # Debian's by binding /dev/null over it).
    found = sorted(p for p in glob.glob("/usr/lib/postgresql/*/bin/initdb") if os.access(p, os.X_OK))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def postgres_problem() -> str | None:
    """Why no throwaway PostgreSQL can be started here (naming the install line), or None."""
    try:
        import psycopg  # noqa: F401  (only asked whether it is installed)
    except ImportError:
        return "psycopg is not installed (3rdparty/python/requirements.txt lists it)"
    bin_dir = _bin_dir()
    if bin_dir is None or not os.access(bin_dir / "pg_ctl", os.X_OK):
        return f"PostgreSQL's initdb and pg_ctl are not installed: {POSTGRES_INSTALL}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return f"running as root without a `postgres` user to run PostgreSQL as: {POSTGRES_INSTALL}"
    return None


def require_postgres() -> None:
    """Skip the calling test where no PostgreSQL can be started, saying why; fail instead where
    $ROUTER_REQUIRE_SERVICES is set."""
    skip_or_fail("the PostgreSQL tests", postgres_problem())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresServer:
    """A running throwaway cluster: its URL, and stop/start to test a database that goes away."""

    bin_dir: Path
    data: Path
    port: int
    user: str | None
    """The OS user its binaries run as (`postgres` when the tests run as root), None: the current one."""

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        done = subprocess.run(
            [*prefix, *args], capture_output=True, text=True, timeout=START_TIMEOUT_S + 30, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.data}"
        self._run(
            str(self.bin_dir / "pg_ctl"),
            "start",
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "-D",
            str(self.data / "db"),
            "-l",
            str(self.data / "server.log"),
            "-o",
            options,
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bin_dir / "pg_ctl"), "stop", "-w", "-m", mode, "-D", str(self.data / "db"))

    def processes(self) -> list[int]:
        """The cluster's processes: the postmaster (its pid file's first line) and every child of it."""
        postmaster = int((self.data / "db" / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in glob.glob("/proc/[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(stat).read_text().rpartition(")")[2].split()
                if int(fields[1]) == postmaster:
                    children.append(int(Path(stat).parent.name))
        return [postmaster, *children]

    def signal(self, signum: int) -> None:
        """Send `signum` to every process of the cluster: SIGSTOP hangs the database with its connections
        open (as a partition or a failover does), SIGCONT lets it go on. The postmaster first, and its
        children listed after: a backend it forks meanwhile (a client connecting) is not left running."""
        postmaster = self.processes()[0]
        os.kill(postmaster, signum)
        for pid in self.processes()[1:]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)


@contextmanager
def cluster() -> Iterator[PostgresServer]:
    """A fresh cluster, started; stopped and removed on exit (also for the benchmarks, without pytest's
    skip: there a missing PostgreSQL is a RuntimeError naming the install line)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        raise RuntimeError(f"PostgreSQL is not installed: {POSTGRES_INSTALL}")
    user = "postgres" if os.geteuid() == 0 else None
    data = Path(tempfile.mkdtemp(prefix="router-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(data, entry.pw_uid, entry.pw_gid)
    server = PostgresServer(bin_dir, data, _free_port(), user)
    try:
        server._run(
            str(bin_dir / "initdb"),
            "-D",
            str(data / "db"),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        server.start()
        yield server
    finally:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):  # never started, or stopped
            server.stop("immediate")
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """`cluster()` for a test: skips (or fails, see `require_postgres`) where PostgreSQL is not installed."""
    require_postgres()
    with cluster() as server:
        yield server


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL for a test module (each test uses its own database: `fresh_database`)."""
    with postgres_server() as server:
        yield server


def fresh_database(server: PostgresServer, name: str) -> str:
    """A new empty database on the server; its URL."""
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')  # type: ignore[arg-type]  # a test's own name
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    return f"postgresql://postgres@127.0.0.1:{server.port}/{name}"
