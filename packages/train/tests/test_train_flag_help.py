"""A flag that mirrors a config field says what the field's docstring says (issue 18: one text serves the
config and the CLI, as in prime-rl's configs), and every such field has a docstring."""

from __future__ import annotations

import argparse
import importlib

import pytest
from pydantic import BaseModel

from router_oracle import cli as oracle_cli
from router_oracle.table import OracleRule
from router_train import cli
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.anypool.run import AnyPoolRunConfig
from router_train.commands import COMMANDS, options_models
from router_train.commands import analyze as analyze_command
from router_train.commands import config as config_command
from router_train.commands import evaluate as evaluate_command
from router_train.commands import evaluate_anypool as evaluate_anypool_command
from router_train.commands import feedback as feedback_command
from router_train.commands import fit as fit_command
from router_train.commands import launch as launch_command
from router_train.commands import replay as replay_command
from router_train.commands import serve as serve_command
from router_train.local.config import FeatureConfig, LocalTrainConfig
from router_train.route import CheckpointSpec, EndpointSpec
from router_train.route.baseline_checkpoint import BaselineCheckpoint

MIRRORS: dict[str, list[type[BaseModel]]] = {
    "local": [LocalTrainConfig, FeatureConfig],
    "local-anypool": [AnyPoolRunConfig, AnyPoolTrainConfig, FeatureConfig],
    "route": [CheckpointSpec, EndpointSpec],
    "fit": [fit_command.Options, BaselineCheckpoint],
    "config": [config_command.Options],
    "analyze": [analyze_command.Options],
    "launch": [launch_command.Options],
    "evaluate": [evaluate_command.Options],
    "evaluate-anypool": [evaluate_anypool_command.Options],
    "serve": [serve_command.Options],
    "feedback": [feedback_command.Options],
    "replay": [replay_command.Options],
    "router-oracle build": [OracleRule],
}
"""Each command whose flags fill a config, and the configs: a flag whose dest is one of their fields
mirrors that field."""


def test_a_command_options_model_is_held_to_its_flags() -> None:
    # `Options` in a command's module names the model its flags fill: the checks below then cover it.
    declared = {
        name: options
        for name, c in COMMANDS.items()
        if (options := getattr(importlib.import_module(c.module), "Options", None)) is not None
    }
    assert sorted(declared) == sorted(COMMANDS)
    assert all(set(options_models(options)) <= set(MIRRORS[name]) for name, options in declared.items())


def _words(text: str) -> str:
    return " ".join(text.split())


def _command(name: str) -> argparse.ArgumentParser:
    parser = oracle_cli._parser() if name.startswith("router-oracle ") else cli.build_parser(name)
    name = name.removeprefix("router-oracle ")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command: argparse.ArgumentParser = sub.choices[name]
    return command


@pytest.mark.parametrize("command", sorted(MIRRORS))
def test_mirrored_flag_help_is_the_field_docstring(command: str) -> None:
    mirrored = 0
    for action in _command(command)._actions:
        model = next((m for m in MIRRORS[command] if action.dest in m.model_fields), None)
        if model is None:
            continue
        mirrored += 1
        flag = "/".join(action.option_strings) or action.dest
        field = model.model_fields[action.dest]
        assert field.description, f"{model.__name__}.{action.dest} ({flag}) has no docstring"
        doc = _words(field.description.replace("%", "%%"))
        assert _words(action.help or "").startswith(doc), f"{command} {flag}: help is not the docstring"
        default = action.default
        if default is None and not field.is_required():
            default = field.get_default(call_default_factory=True)
        if isinstance(action, argparse._StoreTrueAction):
            # A switch is off unless given: its help names no default.
            assert "(default: " not in (action.help or ""), f"{command} {flag}: a switch shows a default"
        elif default not in (None, []):
            assert "(default: " in (action.help or ""), f"{command} {flag}: the default is not shown"
    assert mirrored >= 1, f"{command}: no flag mirrors its config"


@pytest.mark.parametrize("model", list(dict.fromkeys(m for ms in MIRRORS.values() for m in ms)))
def test_every_field_of_a_mirrored_config_has_a_docstring(model: type[BaseModel]) -> None:
    assert [n for n, f in model.model_fields.items() if not f.description] == []


def test_help_is_whole_and_renders(capsys: pytest.CaptureFixture[str]) -> None:
    # `%` in a docstring must reach the help as itself (argparse formats help with `%`).
    with pytest.raises(SystemExit):
        cli.main(["local", "--help"])
    out = _words(capsys.readouterr().out)
    assert "the majority label (85% of the bundled tasks)" in out
    assert "GRPO steps (policy updates), 1 to 1,000,000. (default: 600)" in out
