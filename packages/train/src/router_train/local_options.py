"""The local trainer's options (`router-train local`, and `router-train evaluate --local NAME=OPTIONS`)."""

from __future__ import annotations

import argparse
import shlex
from typing import NoReturn

from pydantic import ValidationError

from router_frontier_rl.rewards import REWARD_NAMES
from router_oracle.infra.validation_message import one_line
from router_train.cli_args import add_grpo_arguments, field_flag, given
from router_train.local.config import FeatureConfig, LocalTrainConfig, RewardWeights


def _weights(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 5 comma-separated numbers, got {text!r}") from None
    if len(values) != 5:
        raise argparse.ArgumentTypeError(f"expected 5 comma-separated numbers, got {len(values)}")
    return values


def add_training_arguments(p: argparse.ArgumentParser) -> None:
    """The training knobs (not the table, split or output): `router-train evaluate --local` takes them too."""
    add_grpo_arguments(p, LocalTrainConfig)
    field_flag(p, LocalTrainConfig, "shift_folds")
    field_flag(p, LocalTrainConfig, "upsample", action=argparse.BooleanOptionalAction)
    field_flag(p, FeatureConfig, "difficulty", action="store_true")
    field_flag(p, FeatureConfig, "irt", action="store_true")
    field_flag(p, FeatureConfig, "task_features", metavar="FILE")
    field_flag(p, LocalTrainConfig, "reward", "--reward-weights", type=_weights, metavar="W1,W2,W3,W4,W5")


class _OptionsParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def config_from_options(options: str) -> LocalTrainConfig:
    """A LocalTrainConfig from `router-train local` training options written as one string, e.g.
    `--upsample --lr 0.2` (`router-train evaluate --local NAME=OPTIONS`); raises ValueError."""
    p = _OptionsParser(prog="--local", add_help=False)
    add_training_arguments(p)
    args = p.parse_args(shlex.split(options))
    try:
        return config_from_args(args)
    except ValidationError as exc:  # a ValueError too, whose own text runs to lines with URLs
        raise ValueError(one_line(exc)) from None


def config_from_args(args: argparse.Namespace) -> LocalTrainConfig:
    fields = given(args, *LocalTrainConfig.model_fields)
    features = given(args, "difficulty", "irt", "task_features")
    if features:
        fields["features"] = FeatureConfig(**features)
    if args.reward is not None:
        try:
            fields["reward"] = RewardWeights(**dict(zip(REWARD_NAMES, args.reward, strict=True)))
        except ValidationError as exc:
            raise ValueError(f"--reward-weights: {one_line(exc)}") from None
    return LocalTrainConfig(**fields)
