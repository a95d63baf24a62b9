"""Where the bundled data lives, and how bundled files are named in provenance.

Paths come from this module's `__file__`, so they work from a source checkout, a wheel and a Pants
sandbox alike. Bundled files are recorded in tables by a package-relative name
(`router_oracle/data/...`), so a table built from them is identical on every machine.
"""

from __future__ import annotations

import os
from pathlib import Path

from router_oracle.infra.errors import OracleInputError

DATA_DIR = Path(__file__).parent / "data"
"""The package's data directory."""

POOLS_DIR = DATA_DIR / "pools"
"""The bundled pool files (`<name>.toml`)."""

BUNDLED_PREFIX = "router_oracle/data"
"""How bundled files are named in a table's provenance and command line."""

TASKS_FILE = "swebench-verified-tasks.jsonl.gz"
LEADERBOARD_FILE = "swebench-bash-only-leaderboard-2026-02-26.json.gz"
OPENHANDS_FILE = "openhands-index-results-2026-06-30.tar.gz"


def tasks_path() -> Path:
    """The bundled SWE-bench Verified task file (500 tasks, JSONL, gzipped)."""
    return DATA_DIR / TASKS_FILE


def leaderboard_path() -> Path:
    """The bundled swe-bench.com bash-only leaderboard (JSON, gzipped; CC BY-NC 4.0)."""
    return DATA_DIR / LEADERBOARD_FILE


def openhands_path() -> Path:
    """The bundled OpenHands Index results release of 2026-06-30 (the archive as released; MIT)."""
    return DATA_DIR / OPENHANDS_FILE


def pool_names() -> list[str]:
    """Names of the bundled pools (`default`, `multi_run`, ...), sorted."""
    return sorted(p.stem for p in POOLS_DIR.glob("*.toml"))


def pool_path(name: str) -> Path:
    """The bundled pool file called `name` (e.g. `default`)."""
    path = POOLS_DIR / f"{name}.toml"
    if not path.is_file():
        raise OracleInputError(f"no bundled pool named {name!r}; bundled pools: {', '.join(pool_names())}")
    return path


def is_bundled(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is one of the package's bundled data files (through any symlink)."""
    try:
        Path(path).resolve().relative_to(DATA_DIR.resolve())
    except ValueError:
        return False
    return True


def display_path(path: str | os.PathLike[str]) -> str:
    """How a file is named in a table: machine-independent where possible, always telling files apart.

    Bundled files get their package-relative name; relative paths stay as given; an absolute path
    becomes relative to the working directory when it lies under it, else stays absolute (two inputs
    named alike in different directories, e.g. several runs' `trajs`, must stay distinguishable, and
    the recorded command must find them again).
    """
    p = Path(path)
    absolute = p.resolve()
    # Compare resolved paths: a sandbox or an editable install may reach the data through symlinks.
    try:
        return f"{BUNDLED_PREFIX}/{absolute.relative_to(DATA_DIR.resolve()).as_posix()}"
    except ValueError:
        pass
    if not p.is_absolute():
        return p.as_posix()
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return p.as_posix()
