"""Which tasks a `router-train fit` checkpoint was fitted on: the table and the part of it, as every
fitted kind's checkpoint records them (`route.baseline_checkpoint`, `irt.checkpoint`)."""

from __future__ import annotations

from typing import Literal

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Seed, Share


class FitSource(FrozenModel):
    """The table a fit read and the tasks of it it learned from; a checkpoint carries these fields as its
    own (`**source.model_dump()`), so its file format does not nest them."""

    table: str
    """The oracle table fitted on: its path as given, or `router_frontier_rl/data/oracle_table.json` (the
    env's bundled table, when none is given)."""
    table_sha256: str
    """Hex sha256 of that table file's bytes."""
    split: Literal["all", "train"]
    """The tasks it is fitted on: every task of the table, or the env's train split."""
    eval_fraction: Share
    """With `split` train: the env split's held-out share, in (0, 1)."""
    split_seed: Seed
    """With `split` train: the env split's seed (0 to 2**32 - 1)."""
