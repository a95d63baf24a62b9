"""`router-train route`: which pool model should take each task, by a trained router.

Routers: `--checkpoint` (a `router-train local` or `fit` checkpoint, or a `local-anypool` one with
`--pool`) or `--endpoint URL --model NAME` (an LLM router behind an OpenAI-compatible API, asked with
the env's exact prompts). Tasks: `--instance ID` (bundled SWE-bench Verified), `--tasks FILE.jsonl` or
`--issue FILE|- --repo OWNER/NAME`. Output: one JSON object per task (`route.Decision`) on stdout or
`-o FILE` (written whole or not at all). `--budget USD` / `--quality R` route at the user's objective:
the router's dial point where its inner estimate backs it, else the floor, the mix of single models
there (docs/route.md); `--dial X` at a dial point. What it routes at goes to stderr.

Exit codes: 0 routed, 1 the endpoint failed after its retries (one line on stderr, nothing written),
2 bad input (one line on stderr, nothing written), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from router_oracle.infra.atomic_file import output_file, write_text_atomic
from router_oracle.task_input import TaskInput
from router_train.cli_args import field_flag, given, path_arg
from router_train.commands import summary
from router_train.route import CheckpointSpec, EndpointSpec, RouteError, RouterSpec, load_router
from router_train.route.operating_point import point_lines
from router_train.route.plan import mini_swe_agent_plan, read_model_map
from router_train.route.router import ScoringRouter
from router_train.route.spec import ROUTER_SPEC_FIELDS, parse_router_spec
from router_train.route.task import bundled_instances, bundled_tasks, issue_task, read_task_file

DEFAULT_PLAN_DIR = Path("runs/route")
"""`--plan`: where each model's mini-swe-agent run writes (`<dir>/<model id>`)."""


Options = RouterSpec
"""The models the router flags fill, `CheckpointSpec | EndpointSpec` (the task and output flags are the
command's own)."""


def _spec_flag(group: Any, name: str, *flags: str, **kwargs: Any) -> None:
    """The flag of the spec field `name` (a shared field's docstring is the same in both specs)."""
    field_flag(
        group, CheckpointSpec if name in CheckpointSpec.model_fields else EndpointSpec, name, *flags, **kwargs
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "route",
        help=summary("route"),
        description=(
            "Route each task to a pool model with a trained router and print one JSON object per task "
            "(instance_id, model, reason, router; --explain adds scores or the LLM's reply). Exit codes: "
            "0 routed, 1 endpoint failed after retries, 2 bad input, 130 interrupted."
        ),
    )
    r = p.add_argument_group("router (one of --checkpoint, --endpoint)")
    for name in ("checkpoint", "endpoint", "model"):
        _spec_flag(r, name)
    _spec_flag(r, "api_key_env", metavar="VAR")
    for name in ("temperature", "max_tokens"):
        _spec_flag(r, name)
    _spec_flag(r, "timeout_s", "--timeout")
    for name in ("max_retries", "concurrency"):
        _spec_flag(r, name)
    _spec_flag(r, "fallback", metavar="MODEL")
    for name in ("pool", "table", "candidates", "eval_fraction", "split_seed"):
        _spec_flag(r, name)
    _spec_flag(r, "task_features", metavar="FILE")
    d = p.add_argument_group("objective (at most one of --budget, --quality, --dial; checkpoints only)")
    _spec_flag(d, "budget", metavar="USD")
    _spec_flag(d, "quality", metavar="R")
    _spec_flag(d, "dial", metavar="X")
    _spec_flag(d, "no_safe_point", action="store_true")
    t = p.add_argument_group("tasks (one of --instance, --tasks, --issue)")
    t.add_argument("--instance", action="append", metavar="ID", help="bundled SWE-bench Verified task")
    t.add_argument(
        "--tasks", type=path_arg, metavar="FILE", help="JSONL[.gz]: instance_id, repo, problem_statement"
    )
    t.add_argument("--issue", metavar="FILE|-", help="one new issue's text (- reads stdin); needs --repo")
    t.add_argument("--repo", metavar="OWNER/NAME", help="--issue: its GitHub repository")
    o = p.add_argument_group("output")
    o.add_argument("-o", "--output", type=path_arg, help="JSON Lines file (default: stdout)")
    o.add_argument("--explain", action="store_true", help="add per-model scores (or the LLM's raw reply)")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    o.add_argument("--plan", choices=("mini-swe-agent",), help="also print the harness commands per model")
    o.add_argument(
        "--plan-every-model",
        action="store_true",
        help="--plan: every pool model runs every task (the runs a new oracle table needs)",
    )
    o.add_argument("--model-map", type=path_arg, metavar="FILE", help="--plan: TOML [models] id -> name")
    o.add_argument(
        "--plan-output-dir",
        type=path_arg,
        default=DEFAULT_PLAN_DIR,
        help=f"--plan: runs dir ({DEFAULT_PLAN_DIR})",
    )
    p.set_defaults(func=run)


def _tasks(args: argparse.Namespace) -> list[TaskInput]:
    given = [n for n in ("instance", "tasks", "issue") if getattr(args, n)]
    if len(given) != 1:
        raise RouteError("give exactly one of --instance, --tasks, --issue")
    if args.repo is not None and not args.issue:
        raise RouteError("--repo goes with --issue")
    if args.instance:
        return bundled_instances(args.instance)
    if args.tasks is not None:
        return read_task_file(args.tasks)
    if args.repo is None:
        raise RouteError("--issue needs --repo OWNER/NAME")
    if args.issue == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.issue).read_text(encoding="utf-8")
        except OSError as exc:
            raise RouteError(f"--issue {args.issue}: cannot read: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise RouteError(f"--issue {args.issue}: not UTF-8 text (byte {exc.start})") from exc
    return [issue_task(text, args.repo, source=f"--issue {args.issue}")]


def run(args: argparse.Namespace) -> int:
    # Bad input raises (RouteError, pydantic's ValidationError): one line, exit 2, before any request.
    if args.plan is None and (args.model_map is not None or args.plan_every_model):
        raise RouteError("--model-map and --plan-every-model go with --plan")
    spec = parse_router_spec(given(args, *ROUTER_SPEC_FIELDS))
    tasks = _tasks(args)
    model_map = read_model_map(args.model_map) if args.model_map is not None else None
    if args.output is not None:
        output_file(args.output)  # an unusable -o fails now, before any request
    router = load_router(spec)
    if isinstance(router, ScoringRouter):
        budget = spec.budget if isinstance(spec, CheckpointSpec) else None
        for line in point_lines(router.point, budget):
            print(f"router-train route: {line}", file=sys.stderr)
    if args.issue:
        print(f"router-train route: issue id {tasks[0].instance_id}", file=sys.stderr)
    # EndpointError (after its bounded retries): one line, exit 1, nothing written.
    decisions = router.route_many(tasks, explain=args.explain, progress=not args.quiet)
    text = "".join(d.json_line() for d in decisions)
    if args.output is not None:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    if args.plan is not None:
        every = router.pool if args.plan_every_model else ()
        plan = mini_swe_agent_plan(
            decisions, set(bundled_tasks()), model_map, args.plan_output_dir, every_model=every
        )
        # With decisions on stdout the plan goes to stderr, so stdout stays valid JSON Lines.
        (sys.stdout if args.output is not None else sys.stderr).write(plan)
    return 0
