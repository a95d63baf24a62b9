"""Outputs cmp-identical before and after (issue 54): run one named command set in two source trees and
compare every output file byte for byte.

Run from the repository root (prints one line per command; not a test):
  python packages/train/benchmarks/outputs_identical.py --before /work/wt-before --after .

Each tree runs with PYTHONPATH=<tree>/packages/{oracle,env,train}/src, this interpreter and
OPENBLAS_NUM_THREADS=1, every command in a work directory of its own (relative paths only, so stdout
names no temp dir); the two trees run side by side. The set: `router-oracle build` (default pool);
`router-train fit` of tfidf-logreg(balanced) and tfidf-knn on half the tasks, `router-train local --steps 30`;
`router-train route` of 240 bundled tasks with each checkpoint at the default point, at
`--no-safe-point` and at an honoured `--dial` (probed on the after tree: the first of DIALS its floor
does not refuse); `router-train evaluate --folds 2 --fold-seeds 0`; `router-train feedback` on a
scripted decision log (the same bytes for both trees) with the local checkpoint as `--candidate` and
`--long-table`. Compared: every output file and stdout (stderr carries progress bars and is not);
the exit codes must agree. Additions made on purpose are dropped from the after's files by the named
rules in RULES, each printed where it applied; nothing else is normalised.
Exit codes: 0 every command identical, 1 a difference (or a command failed), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("oracle", "env", "train")
PROGRAMS = {"router-train": "router_train.cli", "router-oracle": "router_oracle"}
TASKS_FILE = "packages/oracle/src/router_oracle/data/swebench-verified-tasks.jsonl.gz"
ROUTE_TASKS = 240
DIALS = ("0", "0.5", "1")
POOL = ("nemotron-3-super", "claude-opus-4.7", "gpt-5.5")
FEEDBACK_TASKS = 60
EXPLORE_RATE = 0.1
FITS = {"logreg": "tfidf-logreg(balanced)", "knn": "tfidf-knn"}
"""Work directory (and --output-dir) -> the `fit` baseline: the balanced classifier, and kNN, whose dial 0
the floor honours on these tasks (the classifier's and local's dials are all refused)."""
KINDS = (*FITS, "local")


@dataclass(frozen=True)
class Rule:
    """A named, printed normalisation of one output: what the session added on purpose."""

    name: str
    """How the output line names it."""
    apply: Callable[[bytes, bytes], tuple[bytes, bytes]]
    """(before, after) -> (before, after) with the addition dropped from the after."""


@dataclass(frozen=True)
class Command:
    """One command of the set, run in each tree's own work directory."""

    name: str
    """Printed name."""
    program: str
    """`router-train` or `router-oracle`."""
    args: tuple[str, ...]
    """Its arguments (paths relative to the work directory)."""
    outputs: tuple[str, ...]
    """Files compared besides stdout."""
    rules: dict[str, Rule] = field(default_factory=dict)
    """Output file (or `stdout`) -> the rule applied to it before comparing."""
    setup: Callable[[Path], None] | None = None
    """Writes this command's inputs into the work directory (the same bytes for both trees)."""


@dataclass(frozen=True)
class Result:
    """One tree's run of a command: exit code, stdout, the output files' bytes (None: not written)."""

    rc: int
    stdout: bytes
    stderr_tail: str
    files: dict[str, bytes | None]


# --- rules: each drops exactly one addition of this session from the after's output ---------------


def _drop_model_resolved(before: bytes, after: bytes) -> tuple[bytes, bytes]:
    """Checkpoints' new calibration field `model_resolved` (per-model resolve rates, issue 53)."""
    if b'"model_resolved"' in before:
        return before, after
    dropped = re.sub(rb',"model_resolved":\[[^\]]*\]', b"", after, count=1)
    # The bytes removed must be exactly calibration.model_resolved, nothing else.
    want = json.loads(after)
    want.get("calibration", {}).pop("model_resolved", None)
    return before, dropped if json.loads(dropped) == want else after


def _drop_objectives_json(before: bytes, after: bytes) -> tuple[bytes, bytes]:
    """evaluate's report.json: the new `objectives` of each evaluation, compared as parsed JSON."""
    b, a = json.loads(before), json.loads(after)
    for ev in a.get("evaluations", []):
        ev.pop("objectives", None)
    return _canonical(b), _canonical(a)


def _canonical(obj: object) -> bytes:
    # Key order kept: a reordering is still a difference.
    return json.dumps(obj, indent=1, ensure_ascii=False).encode()


def _drop_objectives_md(before: bytes, after: bytes) -> tuple[bytes, bytes]:
    """report.md: the section `### Objectives: router or floor` (its heading and its fenced table)."""
    pattern = rb"### Objectives: router or floor\n+```\n.*?\n```\n\n"
    return before, re.sub(pattern, b"", after, count=1, flags=re.S)


def _drop_objectives_stdout(before: bytes, after: bytes) -> tuple[bytes, bytes]:
    """evaluate's stdout: the printed objectives table (from its `objective:` line to a blank line)."""
    return before, re.sub(rb"\nobjective: each learned router.*?\n\n", b"\n", after, count=1, flags=re.S)


def _mask_timing(before: bytes, after: bytes) -> tuple[bytes, bytes]:
    """`local`'s stdout: the wall-time figures of its last line (`N s in all, M ms/step`) in both."""
    pattern, mask = rb"[0-9.]+ s in all, [0-9.]+ ms/step", b"<time> s in all, <time> ms/step"
    return re.sub(pattern, mask, before), re.sub(pattern, mask, after)


def _drop_chooser_router(before: bytes, after: bytes) -> tuple[bytes, bytes]:
    """route at a dial: the new `"chooser":"router"` of each honoured line (a `floor` one stays)."""
    return before, after.replace(b',"chooser":"router"', b"")


RULES = {
    "drop-checkpoint-model_resolved": Rule("drop-checkpoint-model_resolved", _drop_model_resolved),
    "drop-objectives-json": Rule("drop-objectives-json", _drop_objectives_json),
    "drop-objectives-md": Rule("drop-objectives-md", _drop_objectives_md),
    "drop-objectives-stdout": Rule("drop-objectives-stdout", _drop_objectives_stdout),
    "mask-local-timing": Rule("mask-local-timing", _mask_timing),
    "drop-chooser-router": Rule("drop-chooser-router", _drop_chooser_router),
}


# --- inputs written identically for both trees ------------------------------------------------------


def _bundled_tasks(after: Path) -> list[dict[str, str]]:
    with gzip.open(after / TASKS_FILE, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    # Every other task: all repositories, not the first few.
    return [{k: r[k] for k in ("instance_id", "repo", "problem_statement")} for r in rows[::2]]


def _write_tasks(tasks: list[dict[str, str]]) -> Callable[[Path], None]:
    def setup(work: Path) -> None:
        lines = [json.dumps(t) + "\n" for t in tasks[:ROUTE_TASKS]]
        (work / "tasks.jsonl").write_text("".join(lines), encoding="utf-8")

    return setup


def _decision_log(tasks: list[dict[str, str]]) -> str:
    """A serve decision log: decisions and outcomes of FEEDBACK_TASKS tasks, one checkpoint, 10% explored."""
    lines = []
    for i, task in enumerate(tasks[:FEEDBACK_TASKS]):
        pick, explored = POOL[(i * 7) % 5 % 3], i % 10 == 3
        model = POOL[(POOL.index(pick) + 1) % 3] if explored else pick
        propensity = EXPLORE_RATE / 3 + (0 if explored else 1 - EXPLORE_RATE)
        key, second = f"{i:064x}", f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}"
        lines.append({
            "event": "decision", "instance_id": task["instance_id"], "model": model, "router": "local:x",
            "time": f"{second}.000Z", "task": key, "latency_ms": 1.0, "router_model": pick,
            "explored": explored, "propensity": round(propensity, 6), "checkpoint_sha256": "7" * 64,
        })  # fmt: skip
        lines.append({
            "event": "outcome", "time": f"{second}.500Z", "task": key, "instance_id": task["instance_id"],
            "model": model, "resolved": (i * 5) % 7 < 4, "reported_cost": round(0.2 + (i % 9) * 0.15, 4),
            "cost": round(0.2 + (i % 9) * 0.15, 4), "source": "feedback", "revision": 0,
        })  # fmt: skip
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)


def _write_log(text: str) -> Callable[[Path], None]:
    def setup(work: Path) -> None:
        (work / "decisions.jsonl").write_text(text, encoding="utf-8")

    return setup


# --- the command set ----------------------------------------------------------------------------------


def first_commands(tasks: list[dict[str, str]]) -> list[Command]:
    """What needs no probe: build, fit, local, routes at the default and native points, evaluate, feedback."""
    ckpt, objectives_md = RULES["drop-checkpoint-model_resolved"], RULES["drop-objectives-md"]
    routes = [
        Command(f"route {kind} {label}", "router-train",
                ("route", "--checkpoint", f"../{kind}/{kind}/checkpoint.json", "--tasks", "tasks.jsonl",
                 "--quiet", "-o", "decisions.jsonl", *flags),
                ("decisions.jsonl",), setup=_write_tasks(tasks))
        for kind in KINDS
        for label, flags in (("default", ()), ("--no-safe-point", ("--no-safe-point",)))
    ]  # fmt: skip
    return [
        Command("router-oracle build", "router-oracle", ("build", "--no-progress", "-o", "table.json"),
                ("table.json",)),
        *(Command(f"fit {name}", "router-train",
                  ("fit", name, "--split", "train", "--eval-fraction", "0.5", "--output-dir", kind),
                  (f"{kind}/checkpoint.json",), {f"{kind}/checkpoint.json": ckpt})
          for kind, name in FITS.items()),
        Command("local --steps 30", "router-train",
                ("local", "--steps", "30", "--tasks-per-step", "16", "--shift-folds", "0", "--quiet",
                 "--output-dir", "local"),
                ("local/checkpoint.json", "local/metrics.jsonl", "local/summary.json"),
                {"local/checkpoint.json": ckpt, "stdout": RULES["mask-local-timing"]}),
        *routes,
        Command("evaluate --folds 2 --fold-seeds 0", "router-train",
                ("evaluate", "--folds", "2", "--fold-seeds", "0", "--jobs", "1", "--no-plot", "-o", "ev"),
                ("ev/report.json", "ev/report.md"),
                {"ev/report.json": RULES["drop-objectives-json"], "ev/report.md": objectives_md,
                 "stdout": RULES["drop-objectives-stdout"]}),
        Command("feedback (scripted log, --candidate local)", "router-train",
                ("feedback", "decisions.jsonl", "--candidate", "../local/local/checkpoint.json",
                 "--bootstrap", "200", "--long-table", "long.jsonl"),
                ("long.jsonl",), setup=_write_log(_decision_log(tasks))),
    ]  # fmt: skip


def dial_command(kind: str, dial: str, tasks: list[dict[str, str]]) -> Command:
    """route with the KIND checkpoint at an honoured --dial."""
    return Command(
        f"route {kind} --dial {dial}", "router-train",
        ("route", "--checkpoint", f"../{kind}/{kind}/checkpoint.json", "--tasks", "tasks.jsonl", "--quiet",
         "--dial", dial, "-o", "decisions.jsonl"),
        ("decisions.jsonl",), {"decisions.jsonl": RULES["drop-chooser-router"]}, _write_tasks(tasks),
    )  # fmt: skip


# --- running ----------------------------------------------------------------------------------------------


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(str(tree / "packages" / p / "src") for p in PACKAGES)
    return env


def _workdir(root: Path, command: Command) -> Path:
    # A trainer's work dir is named for its --output-dir (its checkpoint: root/KIND/KIND/checkpoint.json).
    args = command.args
    named = args[args.index("--output-dir") + 1] if "--output-dir" in args else None
    name = named or re.sub(r"[^\w.-]+", "_", command.name)
    work = root / name
    work.mkdir(parents=True, exist_ok=True)
    return work


def run_command(tree: Path, root: Path, command: Command) -> Result:
    """COMMAND in TREE, in its own directory under ROOT."""
    work = _workdir(root, command)
    if command.setup is not None:
        command.setup(work)
    argv = [sys.executable, "-m", PROGRAMS[command.program], *command.args]
    done = subprocess.run(argv, cwd=work, env=_env(tree), capture_output=True)
    files = {o: (work / o).read_bytes() if (work / o).is_file() else None for o in command.outputs}
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
    return Result(done.returncode, done.stdout, tail[0], files)


def run_both(
    trees: tuple[Path, Path], roots: tuple[Path, Path], commands: list[Command]
) -> list[tuple[Result, Result]]:
    """Every command in the before and the after tree, the two trees side by side, each in order."""

    def series(i: int) -> list[Result]:
        return [run_command(trees[i], roots[i], c) for c in commands]

    with ThreadPoolExecutor(max_workers=2) as pool:
        before, after = pool.map(series, (0, 1))
    return list(zip(before, after, strict=True))


def honoured_dial(after: Path, root: Path, kind: str, tasks: list[dict[str, str]]) -> str | None:
    """The first of DIALS at which the after tree's KIND checkpoint routes with `chooser: router`."""
    for dial in DIALS:
        probe = dial_command(kind, dial, tasks[:1])
        result = run_command(after, root / "probe", Command(f"probe-{kind}-{dial}", *_probe_parts(probe)))
        line = (result.files["decisions.jsonl"] or b"{}").splitlines()[0]
        if result.rc == 0 and json.loads(line).get("chooser") == "router":
            return dial
    return None


def _probe_parts(
    c: Command,
) -> tuple[str, tuple[str, ...], tuple[str, ...], dict[str, Rule], Callable[[Path], None] | None]:
    # One directory deeper than the real runs: the checkpoint path gains one `..`.
    args = tuple(a.replace("../", "../../", 1) if a.endswith("checkpoint.json") else a for a in c.args)
    return c.program, args, c.outputs, c.rules, c.setup


# --- comparing ----------------------------------------------------------------------------------------


def _first_difference(before: bytes, after: bytes) -> str:
    b, a = before.splitlines(), after.splitlines()
    for n, (x, y) in enumerate(zip(b, a, strict=False), 1):
        if x != y:
            return f"line {n}: before {_clip(x)} | after {_clip(y)}"
    return f"line {min(len(b), len(a)) + 1}: one side ends ({len(b)} vs {len(a)} lines)"


def _clip(line: bytes) -> str:
    text = line.decode(errors="replace")
    return repr(text if len(text) <= 160 else text[:157] + "...")


def compare(command: Command, before: Result, after: Result) -> tuple[bool, str]:
    """(identical, the printed line) for one command's two runs."""
    if before.rc != 0 or after.rc != 0:
        tail = after.stderr_tail or before.stderr_tail
        return False, f"differs    {command.name}: exit {before.rc} / {after.rc}: {tail}"
    applied = []
    for name, b, a in [("stdout", before.stdout, after.stdout)] + [
        (o, before.files[o], after.files[o]) for o in command.outputs
    ]:
        if b is None or a is None:
            written = f"before {b is not None}, after {a is not None}"
            return False, f"differs    {command.name}: {name} not written ({written})"
        rule = command.rules.get(name)
        if rule is not None:
            b2, a2 = rule.apply(b, a)
            if (b2, a2) != (b, a):
                applied.append(f"{name}: {rule.name}")
            b, a = b2, a2
        if b != a:
            return False, f"differs    {command.name}: {name} {_first_difference(b, a)}"
    outputs = ", ".join(("stdout", *command.outputs))
    rules = f"; rules applied: {', '.join(applied)}" if applied else ""
    return True, f"identical  {command.name} ({outputs}){rules}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--before", type=Path, required=True, help="the source tree before (a checkout's root)"
    )
    parser.add_argument("--after", type=Path, required=True, help="the source tree after (a checkout's root)")
    parser.add_argument("--keep", type=Path, help="run in this directory and keep it (default: a temp dir)")
    args = parser.parse_args()
    trees = (args.before.resolve(), args.after.resolve())
    for tree in trees:
        if not (tree / "packages" / "train" / "src" / "router_train").is_dir():
            parser.error(f"{tree}: not a router-frontier-rl source tree (no packages/train/src/router_train)")
    with tempfile.TemporaryDirectory(prefix="outputs-identical-") as tmp:
        return _run(trees, (args.keep or Path(tmp)).resolve())


def _run(trees: tuple[Path, Path], root: Path) -> int:
    print(f"before: {trees[0]}\nafter:  {trees[1]}")
    print("rules (the after's additions on purpose, dropped before comparing):")
    for rule in RULES.values():
        print(f"  {rule.name}: {(rule.apply.__doc__ or '').strip()}")
    roots = (root / "before", root / "after")
    tasks = _bundled_tasks(trees[1])
    commands = first_commands(tasks)
    results = run_both(trees, roots, commands)
    for kind in KINDS:
        dial = honoured_dial(trees[1], roots[1], kind, tasks)
        if dial is None:
            dials = ", ".join(DIALS)
            print(f"# route {kind} --dial: no honoured dial among {dials} (the after's floor refuses each)")
            continue
        command = dial_command(kind, dial, tasks)
        commands.append(command)
        results += run_both(trees, roots, [command])
    verdicts = [compare(c, b, a) for c, (b, a) in zip(commands, results, strict=True)]
    for _, line in verdicts:
        print(line)
    same = sum(ok for ok, _ in verdicts)
    print(f"{same} of {len(verdicts)} commands identical")
    return 0 if same == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
