"""Every `router-train` / `router-oracle` command line of README.md and docs/*.md parses (issue 46, item 5):
each code-block command (doc_commands.py finds them) is parsed by the parser the CLI itself builds, and a
`router-train` command's flags then fill its typed `Options` as `run` would (the checks between options,
e.g. a required pair). Nothing is run: the subcommand's `func` is never called, and no parse reads a file
(a path argument is a `Path`; whether it exists is the command's business when it runs)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
from typing import cast

import pytest
from doc_commands import DocCommand, all_commands, doc_files, is_synopsis
from pydantic import BaseModel, TypeAdapter, ValidationError

from router_oracle.cli import _parser as oracle_parser
from router_oracle.infra.validation_message import one_line
from router_train.cli import build_parser
from router_train.cli_args import given
from router_train.commands import COMMANDS, options_models

COMMANDS_IN_DOCS = [c for c in all_commands() if not is_synopsis(c.argv)]


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[argparse.Namespace | None, str]:
    """The parsed namespace, or None and argparse's message (`--help` parses: None, '')."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            return parser.parse_args(argv), ""
    except SystemExit as exc:
        return None, "" if exc.code == 0 else err.getvalue().strip().splitlines()[-1]


def parse_error(command: DocCommand) -> str:
    """Why the command line does not parse, or '' when it does."""
    if command.error:
        return command.error
    if command.program == "router-oracle":
        return _parse(oracle_parser(), command.argv)[1]
    name = next((a for a in command.argv if not a.startswith("-")), "")
    args, message = _parse(build_parser(name if name in COMMANDS else ""), command.argv)
    if args is None or message:
        return message
    # The flags fill the command's Options as its `run` does (a union, route's RouterSpec, by its members'
    # fields): a check between options fails here too.
    options = importlib.import_module(COMMANDS[args.command].module).Options
    fields = {name for model in options_models(options) for name in cast(type[BaseModel], model).model_fields}
    try:
        TypeAdapter(options).validate_python(given(args, *sorted(fields)))
    except ValidationError as exc:
        return f"router-train {args.command}: {one_line(exc)}"
    return ""


def test_the_docs_hold_command_lines_of_both_tools() -> None:
    """The extraction finds the docs' commands (a regression in it would pass every doc vacuously)."""
    assert len(doc_files()) >= 10
    programs = {c.program for c in COMMANDS_IN_DOCS}
    assert programs == {"router-train", "router-oracle"}
    assert len(COMMANDS_IN_DOCS) >= 50
    commands = {c.argv[0] for c in COMMANDS_IN_DOCS if c.program == "router-train" and c.argv}
    assert {"evaluate", "fit", "route", "serve", "feedback", "local"} <= commands


@pytest.mark.parametrize("command", COMMANDS_IN_DOCS, ids=lambda c: f"{c.doc}:{c.line}")
def test_every_doc_command_line_parses(command: DocCommand) -> None:
    message = parse_error(command)
    assert not message, f"{command.where()}\n  does not parse: {message}"


def test_a_command_line_that_does_not_parse_is_reported_with_the_parser_message() -> None:
    """The check can fail: `fit irt -o D` (the slip docs/feedback.md once showed) is refused with
    argparse's own line."""
    bad = DocCommand("docs/x.md", 1, "router-train", ["fit", "irt", "--split", "train", "-o", "D"])
    assert "the following arguments are required: --output-dir" in parse_error(bad)
    wrong_flag = DocCommand("docs/x.md", 1, "router-oracle", ["build", "--pool", "default"])
    assert "required: -o/--output" in parse_error(wrong_flag)
    no_router = DocCommand("docs/x.md", 1, "router-train", ["route", "--instance", "sympy__sympy-20590"])
    assert parse_error(no_router).startswith("router-train route: ")
    nodes = DocCommand("docs/x.md", 1, "router-train", ["launch", "smoke", "--nodes", "4"])
    assert "--nodes needs --prime-rl" in parse_error(nodes)
    good = DocCommand("docs/x.md", 1, "router-train", ["fit", "irt", "--output-dir", "D"])
    assert parse_error(good) == ""
    # Nothing is read: paths that exist nowhere parse (whether they exist is the command's business).
    absent = ["route", "--checkpoint", "no/such/checkpoint.json", "--tasks", "no/such/tasks.jsonl"]
    assert parse_error(DocCommand("docs/x.md", 1, "router-train", absent)) == ""
    stats = DocCommand("docs/x.md", 1, "router-oracle", ["stats", "no/such/table.json"])
    assert parse_error(stats) == ""
