"""Which `prime` a launch runs: the first on PATH, else the one installed beside the interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from installed_prime import no_installed_prime  # noqa: F401  (autouse: tests see only their fake prime)

from router_train.hosted import prime_tool


def _executable(path: Path, text: str = "#!/bin/sh\necho fake prime\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_the_installed_prime_is_found_without_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the conftest hides the installed prime from other tests; this one tests it
    scripts = tmp_path / "env" / "bin"
    own = _executable(scripts / "prime")
    monkeypatch.setattr(sys, "executable", str(scripts / "python"))
    monkeypatch.setattr(prime_tool.sysconfig, "get_path", lambda name: str(scripts))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert prime_tool.find_prime() == str(own)
    # a `prime` on PATH overrides it
    on_path = _executable(tmp_path / "path" / "prime")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert prime_tool.find_prime() == str(on_path)
    # nothing found: the message says where it looked and how to install
    own.unlink()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert prime_tool.find_prime() is None
    assert prime_tool.prime_ready() == (False, prime_tool.NOT_FOUND)


def test_a_venvs_own_prime_is_found_by_its_python(tmp_path: Path) -> None:
    """A real venv: its python finds the `prime` in its bin directory with an empty PATH."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False, symlinks=True)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    own = _executable(bin_dir / "prime")
    code = "from router_train.hosted.prime_tool import find_prime; print(find_prime())"
    result = subprocess.run(
        [str(bin_dir / "python"), "-c", code],
        env={"PATH": str(tmp_path / "empty"), "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == str(own)
