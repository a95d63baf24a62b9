"""Git repositories made by tests: a base commit (where a task starts) and a later one (after the issue)."""

from __future__ import annotations

import subprocess
from pathlib import Path

BASE_TAG = "v0.1"
LATER_TAG = "v9.9"
BASE_SUBJECT = "base commit"
LATER_SUBJECT = "later commit"

_IDENTITY = [
    "-c",
    "user.name=Fixture",
    "-c",
    "user.email=fixture@example.com",
    "-c",
    "init.defaultBranch=main",
]


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` (with a fixed identity) and return its stripped stdout; raises on failure."""
    done = subprocess.run(["git", *_IDENTITY, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _commit(path: Path, files: dict[str, str], subject: str, tag: str) -> str:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", subject)
    git(path, "tag", tag)
    return git(path, "rev-parse", "HEAD")


def make_repo(path: Path, base: dict[str, str], later: dict[str, str]) -> tuple[str, str]:
    """A new repository at `path`: `base` files committed and tagged BASE_TAG, then `later` files
    committed and tagged LATER_TAG; returns the two commits' shas."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    return _commit(path, base, BASE_SUBJECT, BASE_TAG), _commit(path, later, LATER_SUBJECT, LATER_TAG)
