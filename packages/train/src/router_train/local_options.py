"""The local trainer's options (`router-train local`, and `router-train evaluate --local NAME=OPTIONS`)."""

from __future__ import annotations

import argparse
import shlex
from typing import Any, NoReturn

from pydantic import ValidationError

from router_frontier_rl.rewards import REWARD_NAMES
from router_oracle.numeric_option import field_option
from router_oracle.validation_message import one_line
from router_train.cli_args import add_grpo_arguments, default_of, given
from router_train.local import FeatureConfig, LocalTrainConfig, RewardWeights


def _default_weights() -> str:
    return ",".join(f"{getattr(RewardWeights(), n):g}" for n in REWARD_NAMES)


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
    add_grpo_arguments(p, LocalTrainConfig, "sampling / task-order seed")
    p.add_argument(
        "--shift-folds",
        type=field_option(LocalTrainConfig, "shift_folds"),
        default=None,
        help=(
            f"inner folds that choose the prior shift back from the upsampled label mix "
            f"(default {default_of(LocalTrainConfig, 'shift_folds')}; 0: none)"
        ),
    )
    p.add_argument(
        "--upsample",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="repeat train tasks of rare oracle labels, as the hosted recipe does (default: on)",
    )
    p.add_argument(
        "--difficulty",
        action="store_true",
        help="also feed the SWE-bench Verified difficulty annotation (metadata a live router lacks)",
    )
    p.add_argument(
        "--reward-weights",
        type=_weights,
        default=None,
        metavar="W1,W2,W3,W4,W5",
        help=f"weights of the env's scores {', '.join(REWARD_NAMES)} (default {_default_weights()})",
    )


class _OptionsParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def config_from_options(options: str) -> LocalTrainConfig:
    """A LocalTrainConfig from `router-train local` training options written as one string, e.g.
    `--upsample --lr 0.2` (`router-train evaluate --local NAME=OPTIONS`); raises ValueError."""
    p = _OptionsParser(prog="--local", add_help=False)
    add_training_arguments(p)
    args = p.parse_args(shlex.split(options))
    args.table = args.output_dir = None
    args.eval_fraction = args.split_seed = None
    try:
        return config_from_args(args)
    except ValidationError as exc:  # a ValueError too, whose own text runs to lines with URLs
        raise ValueError(one_line(exc)) from None


def config_from_args(args: argparse.Namespace) -> LocalTrainConfig:
    fields: dict[str, Any] = {"table_path": args.table}
    if args.output_dir is not None:
        fields["output_dir"] = args.output_dir
    fields |= given(
        args,
        "steps",
        "tasks_per_step",
        "samples_per_task",
        "lr",
        "weight_decay",
        "seed",
        "eval_fraction",
        "split_seed",
        "advantage",
        "shift_folds",
    )
    if args.upsample is not None:
        fields["upsample"] = args.upsample
    if args.difficulty:
        fields["features"] = FeatureConfig(difficulty=True)
    if args.reward_weights is not None:
        try:
            fields["reward"] = RewardWeights(**dict(zip(REWARD_NAMES, args.reward_weights, strict=True)))
        except ValidationError as exc:
            raise ValueError(f"--reward-weights: {one_line(exc)}") from None
    return LocalTrainConfig(**fields)
