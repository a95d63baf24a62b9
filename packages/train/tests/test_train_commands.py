"""Every `router-train` command is one module of `router_train.commands`, named as the command, that
registers its parser under that name with the table's summary and runs through its `run`; the
top-level help comes from the table alone."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from types import ModuleType

import pytest
from pydantic import BaseModel

from router_train import cli, commands
from router_train.commands import COMMANDS, options_models


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _listing(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    """Command -> its line in `router-train --help`."""
    return {a.dest: a.help for a in _subparsers(parser)._choices_actions}


def test_every_module_of_the_package_is_a_listed_command() -> None:
    modules = sorted(m.name for m in pkgutil.iter_modules(commands.__path__))
    assert modules == sorted(c.module.rpartition(".")[2] for c in COMMANDS.values())
    assert len(modules) == 12


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_module_registers_its_command_and_runs_it(name: str) -> None:
    module: ModuleType = importlib.import_module(COMMANDS[name].module)
    assert module.__name__.rpartition(".")[2] == name.replace("-", "_")
    parser = argparse.ArgumentParser(prog="router-train")
    sub = parser.add_subparsers(dest="command")
    module.register(sub)
    # One parser, under the command's own name, with the table's summary as its `--help` line.
    assert _listing(parser) == {name: COMMANDS[name].summary}
    assert sub.choices[name].get_default("func") is module.run
    assert callable(module.run)
    assert all(issubclass(m, BaseModel) for m in options_models(module.Options))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_has_an_options_model_with_a_docstring_under_every_field(name: str) -> None:
    module: ModuleType = importlib.import_module(COMMANDS[name].module)
    models = options_models(module.Options)
    assert models and all(issubclass(m, BaseModel) for m in models)
    undocumented = [
        f"{m.__name__}.{n}"
        for m in models
        if issubclass(m, BaseModel)
        for n, f in m.model_fields.items()
        if not f.description
    ]
    assert undocumented == []


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_parser_of_one_command_lists_the_others_as_the_full_parser_does(name: str) -> None:
    full = cli.build_parser()
    assert _listing(cli.build_parser(name)) == _listing(full)
    assert list(_listing(full)) == list(COMMANDS)


def test_top_level_help_imports_no_command_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    imported: list[str] = []
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: imported.append(name))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    assert imported == []
    out = capsys.readouterr().out
    assert all(c.summary.split()[0] in out for c in COMMANDS.values())
