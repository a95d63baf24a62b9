"""Benchmark suite of issue 23 ("engine"): every speed figure the project promises, each measured the same
way, as wall time and CPU time (user + sys of the command and every process it waited for).

Figures (in this order; `--only NAME,NAME` picks some):
  help          `router-train --help` and `router-oracle --help` (median of --repeat runs)
  import        `import router_frontier_rl`, and `import verifiers.v1` alone (the part that is verifiers')
  anypool       `router-train evaluate-anypool` with its default protocol (into a temporary directory;
                `--anypool-args "..."` adds arguments, e.g. "--groups deepseek,meta" or "--quick")
  pants-warm    `./pants --no-pantsd test --force ::` on the caches this machine has (the fast tier); this
                includes starting Pants (~15 s of CPU on 2 cores: its rule graph, built twice)
  pants-daemon  `./pants test --force ::` with the Pants daemon already running, as a second run in a
                checkout is (the first `./pants test ::` starts it and is not timed); CPU includes the
                daemon's and its test processes'
  pants-warm-all  the same with `-- -m ""`: both tiers, the end-to-end tests too, as CI runs them
  pants-cold    `./pants --no-pantsd test ::` with EMPTY Pants caches and launcher cache, as on a new
                machine: they are pointed at a fresh temporary directory (the machine's own caches are
                neither used nor wiped). Downloads Pants, pex and every locked requirement from PyPI.
                Only with --cold.
  ci-cold       `bash .ci/run` in a fresh clone of HEAD on empty caches (as pants-cold), with each CI
                step's elapsed time. Only with --cold.

The commands run from the checkout's sources (PYTHONPATH = the three packages' src folders) with the
interpreter running this script, so run it with the project's venv, from the repository root:

    python3.11 packages/train/benchmarks/bench_suite.py [--only help,import] [--cold]

Wall time depends on what else the machine runs; CPU time much less so. Report both, with the load.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SRC = [REPO / "packages" / p / "src" for p in ("oracle", "env", "train")]
FIGURES = (
    "help",
    "import",
    "anypool",
    "pants-warm",
    "pants-daemon",
    "pants-warm-all",
    "pants-cold",
    "ci-cold",
)
COLD = ("pants-cold", "ci-cold")


@dataclass(frozen=True)
class Timing:
    """One command's wall time and the CPU time of it and its waited-for children."""

    wall: float
    cpu: float
    rc: int


def timed(cmd: list[str], *, env: dict[str, str] | None = None, quiet: bool = True) -> Timing:
    """Run `cmd` from the repository root; (wall, user + sys of the finished children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.DEVNULL if quiet else None
    rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=out, stderr=out, check=False).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu, rc)


def source_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in SRC)
    return env


def report(name: str, t: Timing, note: str = "") -> None:
    status = "" if t.rc == 0 else f"  [exit {t.rc}]"
    print(f"{name:<44} wall {t.wall:8.2f} s   cpu {t.cpu:8.2f} s{status}{('   ' + note) if note else ''}")
    sys.stdout.flush()


def median_of(cmd: list[str], repeat: int, env: dict[str, str]) -> Timing:
    runs = [timed(cmd, env=env) for _ in range(repeat)]
    return Timing(
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        max(r.rc for r in runs),
    )


def bench_help(repeat: int) -> None:
    env = source_env()
    for cli in ("router_train.cli", "router_oracle.cli"):
        report(
            f"{cli} --help (median of {repeat})",
            median_of([sys.executable, "-m", cli, "--help"], repeat, env),
        )


def bench_import(repeat: int) -> None:
    env = source_env()
    for module in ("verifiers.v1", "router_frontier_rl", "router_frontier_rl.taskset"):
        t = median_of([sys.executable, "-c", f"import {module}"], repeat, env)
        report(f"import {module} (median of {repeat})", t)


def bench_anypool(extra: str) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-anypool-") as tmp:
        args = ["evaluate-anypool", *shlex.split(extra), "--no-plot", "-o", tmp]
        cmd = [sys.executable, "-m", "router_train.cli", *args]
        report(
            f"evaluate-anypool {extra}".strip(), timed(cmd, env=source_env()), f"jobs: {os.cpu_count()} CPUs"
        )


def cold_env(tmp: str) -> dict[str, str]:
    """The environment of a new machine's first run: every cache the commands fill points into `tmp`."""
    Path(f"{tmp}/sandboxes").mkdir(exist_ok=True)
    return dict(
        os.environ,
        XDG_CACHE_HOME=f"{tmp}/xdg",  # the launcher's Pants venv and pex tool, prime-rl's venv, pip and uv
        ROUTER_PANTS_CACHE=f"{tmp}/xdg/router-frontier-rl",
        PANTS_LOCAL_STORE_DIR=f"{tmp}/lmdb_store",
        PANTS_NAMED_CACHES_DIR=f"{tmp}/named_caches",
        PANTS_LOCAL_EXECUTION_ROOT_DIR=f"{tmp}/sandboxes",
        PANTS_DYNAMIC_UI="false",
    )


def bench_pants(cold: bool, both_tiers: bool = False) -> None:
    if not cold:
        env = dict(os.environ, PANTS_PANTSD="false", PANTS_DYNAMIC_UI="false")
        tiers = ["--", "-m", ""] if both_tiers else []
        report(
            "./pants test --force :: " + ("-- -m '' " if both_tiers else "") + "(warm caches)",
            timed(["./pants", "--no-pantsd", "test", "--force", "::", *tiers], env=env),
        )
        return
    with tempfile.TemporaryDirectory(prefix="bench-pants-cold-") as tmp:
        report(
            "./pants test :: (cold: empty caches)",
            timed(["./pants", "--no-pantsd", "test", "::"], env=cold_env(tmp)),
        )


def pantsd_cpu() -> float:
    """CPU seconds of this checkout's Pants daemon and the processes it has waited for (0 if none runs)."""
    for pid_file in REPO.glob(".pids/*/pantsd/pid"):
        try:
            stat = Path(f"/proc/{pid_file.read_text().strip()}/stat").read_text()
        except OSError:
            continue
        # After the command name: state is field 3, utime/stime/cutime/cstime are fields 14-17.
        fields = stat.rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return 0.0


def bench_pants_daemon() -> None:
    env = dict(os.environ, PANTS_DYNAMIC_UI="false")
    start = timed(["./pants", "test", "::"], env=env)  # starts the daemon (results cached or not)
    if start.rc != 0:
        report("./pants test :: (starting the daemon)", start)
        return
    before = pantsd_cpu()
    t = timed(["./pants", "test", "--force", "::"], env=env)
    report(
        "./pants test --force :: (daemon running)",
        Timing(t.wall, t.cpu + pantsd_cpu() - before, t.rc),
    )


def bench_ci_cold() -> None:
    """`.ci/run` in a fresh clone of HEAD (with `../shared` beside it when the checkout has one) on empty
    caches: what CI does on a new machine. Its step headers print the elapsed time of each step."""
    with tempfile.TemporaryDirectory(prefix="bench-ci-cold-") as tmp:
        clone = Path(tmp) / "clone" / "main"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        shared = REPO.parent / "shared"
        if shared.is_dir():
            (clone.parent / "shared").symlink_to(shared.resolve())
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(
            ["bash", ".ci/run"], cwd=clone, env=cold_env(tmp), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        for line in proc.stdout.splitlines():
            if line.startswith("=== [") or line.startswith("tests: "):
                print(f"    {line}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            print("\n".join(proc.stdout.splitlines()[-60:]))
        # CPU counts the processes CI waited for, not the Pants daemon's own work.
        t = Timing(wall, cpu, proc.returncode)
        report(".ci/run (fresh clone, empty caches)", t, "cpu: without pantsd")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=None, help=f"comma-separated figures of {', '.join(FIGURES)}")
    parser.add_argument(
        "--cold", action="store_true", help="also the cold `./pants test ::` and `.ci/run` (minutes, PyPI)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each start-up figure (median)")
    parser.add_argument("--anypool-args", default="", help="extra evaluate-anypool arguments")
    args = parser.parse_args()
    chosen = args.only.split(",") if args.only else [f for f in FIGURES if f not in COLD or args.cold]
    unknown = sorted(set(chosen) - set(FIGURES))
    if unknown:
        parser.error(f"--only: unknown figure(s) {unknown}; known: {', '.join(FIGURES)}")
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    for figure in FIGURES:
        if figure not in chosen:
            continue
        if figure == "help":
            bench_help(args.repeat)
        elif figure == "import":
            bench_import(args.repeat)
        elif figure == "anypool":
            bench_anypool(args.anypool_args)
        elif figure == "ci-cold":
            bench_ci_cold()
        elif figure == "pants-daemon":
            bench_pants_daemon()
        else:
            bench_pants(cold=figure == "pants-cold", both_tiers=figure == "pants-warm-all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
