"""The one writer of a set of output files: an evaluation's report (`router-train evaluate`,
`evaluate-anypool`) or a run's checkpoint, metrics and summary (`router-train local-anypool`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from router_oracle.infra.atomic_file import publish_directory


def publish_files(
    outdir: str | os.PathLike[str], files: Mapping[str, bytes], owned: Sequence[str]
) -> list[Path]:
    """Publish `files` (name -> rendered bytes) into `outdir` as one set; the paths written.

    A reader sees the previous report or the new one, never a mix (`publish_directory`); other files in
    `outdir` are kept, and a file of `owned` (every name a report may write) this one lacks, e.g. the
    PNG of an earlier run when the plot is off, is dropped. Render everything before calling: a
    rendering error then leaves no file behind.
    """
    out = Path(outdir)
    with publish_directory(out, owned=tuple(owned)) as staged:
        for name, data in files.items():
            (staged / name).write_bytes(data)
    return [out / name for name in files]
