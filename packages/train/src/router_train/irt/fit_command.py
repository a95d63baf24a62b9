"""`router-train fit irt`: fit the IRT router on the table's tasks (`--split all` or `train`) and every run
of the bundled candidates' results matrix, restricted to those tasks, and save its checkpoint."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from router_oracle.atomic_file import publish_directory
from router_oracle.candidates import BUNDLED_CANDIDATES
from router_oracle.file_hash import sha256_file
from router_oracle.results_matrix import load_results_matrix
from router_oracle.table import Pool, TaskRecord
from router_train.irt.checkpoint import fit_irt_checkpoint, save_irt
from router_train.local.trainer import BUNDLED_TABLE_NAME


def fit_irt(
    args: argparse.Namespace, table_path: Path, pool: Pool, train: Sequence[TaskRecord], checkpoint_file: str
) -> int:
    """Fit and save as `args.output_dir / checkpoint_file` (the `fit` flags in `args`); prints what it did."""
    ckpt = fit_irt_checkpoint(
        train,
        load_results_matrix(BUNDLED_CANDIDATES),
        pool,
        args.seed,
        table=str(args.table) if args.table is not None else BUNDLED_TABLE_NAME,
        table_sha256=sha256_file(table_path),
        results=BUNDLED_CANDIDATES,
        split=args.split,
        eval_fraction=args.eval_fraction,
        split_seed=args.split_seed,
    )
    with publish_directory(args.output_dir, owned=[checkpoint_file]) as staged:
        save_irt(ckpt, staged / checkpoint_file)
    fit = ckpt.fit
    print(
        f"irt: fitted on {len(ckpt.train_task_ids)} tasks of {ckpt.table} ({args.split}) x "
        f"{len(fit.run_ids)} runs: k={fit.k}, alpha={fit.alpha}, temperature={fit.temperature}, "
        f"near-tie tolerance={fit.tolerance}"
    )
    print(f"checkpoint: {Path(args.output_dir) / checkpoint_file}")
    return 0
