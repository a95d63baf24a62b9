"""`router-train analyze`: the issue-only pre-pass for new tasks through any OpenAI-compatible endpoint.

Each task of `--tasks` (JSON Lines, optionally gzipped: `instance_id`, `repo`, `problem_statement`, the
bundled task file's format) is rated on this project's rubric of the 15 issue-only columns of the bundled
judged features (`analyze.rubric`); the answers are parsed strictly (an absent, non-integer or
out-of-scale value is a missing feature, counted, never guessed) and written to `-o FILE` in the
`--task-features` format (`.csv` or `.jsonl`, optionally `.gz`; `router_train.task_features`), whole or
not at all. The counts go to stderr.

Exit codes: 0 written, 1 the endpoint failed after its retries (one line, nothing written), 2 bad input
(one line, nothing written), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import model_validator

from router_oracle.infra.atomic_file import output_file, refuse_inputs_as_outputs
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Count, Retries, Seconds, Temperature
from router_oracle.tasks_file import read_tasks
from router_train.analyze.rubric import RUBRIC
from router_train.analyze.run import Analysis, Endpoint, analyze_tasks
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.task_features import ISSUE_COLUMNS, write_task_features

MAX_CONCURRENCY = 64
"""`--concurrency`'s bound: requests in flight at once."""


class Options(FrozenModel):
    """What `router-train analyze`'s flags fill."""

    tasks: Path
    """task file: JSON Lines (optionally .gz) with instance_id, repo, problem_statement per line (the
    bundled task file's format)"""
    output: Path
    """features file to write: .csv or .jsonl (optionally .gz), the --task-features format"""
    base_url: str
    """the OpenAI-compatible API's base URL, e.g. http://127.0.0.1:8000/v1"""
    model: str
    """the served model name to ask"""
    api_key_env: str | None = None
    """environment variable holding the API key (unset: no key, `EMPTY`)"""
    concurrency: Count = 4
    """requests in flight at once (at most 64)"""
    max_retries: Retries = 3
    """retries of a failed request (HTTP 408/409/429/5xx, timeout, connection error) with the openai
    client's exponential backoff; then the pass fails, exit 1, nothing written"""
    timeout_s: Seconds = 120.0
    """seconds per request before it counts as failed (and is retried)"""
    temperature: Temperature = 0.0
    """sampling temperature"""
    max_tokens: Count | None = None
    """reply token limit (unset: the server's default)"""

    @model_validator(mode="after")
    def _consistent(self) -> Options:
        if self.concurrency > MAX_CONCURRENCY:
            raise ValueError(f"--concurrency {self.concurrency}: at most {MAX_CONCURRENCY}")
        if not self.output.name.endswith((".csv", ".csv.gz", ".jsonl", ".jsonl.gz")):
            raise ValueError(f"-o {self.output}: expected a .csv or .jsonl file (optionally .gz)")
        if self.api_key_env is not None and not os.environ.get(self.api_key_env):
            raise ValueError(f"--api-key-env {self.api_key_env}: that environment variable is not set")
        return self


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "analyze",
        help=summary("analyze"),
        description=(
            "Rate each task of --tasks on the 15 issue-only features of the bundled judged features "
            "(this project's own rubric: router_train/analyze/rubric.py) by asking an LLM behind an "
            "OpenAI-compatible API, from the repository name and issue text only. Answers are parsed "
            "strictly: an absent, non-integer or out-of-scale value is a missing feature (an empty cell, "
            "a null), counted on stderr, never guessed; a router refuses a task with a missing feature. "
            "Writes -o FILE in the --task-features format, whole or not at all. Exit codes: 0 written, "
            "1 endpoint failed after retries, 2 bad input, 130 interrupted."
        ),
    )
    field_flag(p, Options, "tasks", required=True, metavar="FILE")
    field_flag(p, Options, "output", "-o", "--output", required=True, metavar="FILE")
    field_flag(p, Options, "base_url", required=True, metavar="URL")
    field_flag(p, Options, "model", required=True, metavar="NAME")
    field_flag(p, Options, "api_key_env", metavar="VAR")
    for name in ("concurrency", "max_retries", "timeout_s", "temperature", "max_tokens"):
        field_flag(p, Options, name)
    p.set_defaults(func=run)


def counts_line(analysis: Analysis) -> str:
    """What stderr says about the answers: complete tasks, unparseable replies, missing per column."""
    missing = ", ".join(f"{name} {n}" for name, n in analysis.missing.items() if n)
    return (
        f"{analysis.complete} of {len(analysis.rows)} tasks with all {len(RUBRIC)} features; "
        f"{analysis.unparseable} replies not one JSON object; missing values: {missing or 'none'}"
    )


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)
    output_file(options.output)  # an unusable -o fails now, before any request
    refuse_inputs_as_outputs([options.output], [("--tasks", options.tasks)])
    rows, _ = read_tasks(options.tasks)
    endpoint = Endpoint(
        base_url=options.base_url,
        model=options.model,
        api_key=os.environ.get(options.api_key_env, "") if options.api_key_env else "EMPTY",
        concurrency=options.concurrency,
        max_retries=options.max_retries,
        timeout_s=options.timeout_s,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
    )
    analysis = analyze_tasks(rows, endpoint, progress=True)
    write_task_features(options.output, ISSUE_COLUMNS, dict(analysis.rows))
    print(f"router-train analyze: {options.output}: {counts_line(analysis)}", file=sys.stderr)
    return 0
