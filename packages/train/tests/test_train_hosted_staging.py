"""Staging the env for `prime env push`: one self-contained package, from wheels, sdists or sources."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from installed_prime import no_installed_prime  # noqa: F401  (autouse: tests see only their fake prime)

import router_frontier_rl
import router_oracle
from router_train.hosted.config_files import shipped_path
from router_train.hosted.staging import (
    ENV_DIST,
    ORACLE_DIST,
    STAGE_MARKER,
    PackageSource,
    StagingError,
    dir_source,
    find_built_sources,
    read_package_files,
    sdist_source,
    stage_env,
    staged_requirements,
)

ENV_ROOT = Path(router_frontier_rl.__file__).resolve().parent.parent
ORACLE_ROOT = Path(router_oracle.__file__).resolve().parent.parent
FIRST_PARTY = ("router_frontier_rl", "router_oracle", "router_train")

# As Pants (setuptools) writes them into METADATA: old-style parenthesised versions.
ENV_REQUIRES = ("pydantic (>=2)", "router-oracle (==0.1.0)", "verifiers (>=0.4.0)")
ORACLE_REQUIRES = ("pydantic (>=2)", "tqdm")


def _metadata(dist: str, version: str, requires: tuple[str, ...]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {dist}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\n"


def _files(root: Path, package: str) -> dict[str, bytes]:
    return read_package_files(dir_source(root, "x"), package)


def make_wheel(
    out: Path, root: Path, package: str, dist: str, version: str, requires: tuple[str, ...]
) -> Path:
    """A wheel of `package` as a build would make it (package files + dist-info)."""
    stem = f"{dist.replace('-', '_')}-{version}"
    path = out / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for rel, data in sorted(_files(root, package).items()):
            zf.writestr(rel, data)
        zf.writestr(f"{stem}.dist-info/METADATA", _metadata(dist, version, requires))
        zf.writestr(
            f"{stem}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{stem}.dist-info/RECORD", "")
    return path


def make_sdist(
    out: Path, root: Path, package: str, dist: str, version: str, requires: tuple[str, ...]
) -> Path:
    """An sdist with the package under `<name>-<version>/src/`."""
    top = f"{dist.replace('-', '_')}-{version}"
    path = out / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        entries = {f"{top}/src/{rel}": data for rel, data in _files(root, package).items()}
        entries[f"{top}/PKG-INFO"] = _metadata(dist, version, requires).encode()
        for name, data in sorted(entries.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture(scope="module")
def dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    make_wheel(out, ENV_ROOT, "router_frontier_rl", ENV_DIST, "0.1.0", ENV_REQUIRES)
    make_wheel(out, ORACLE_ROOT, "router_oracle", ORACLE_DIST, "0.1.0", ORACLE_REQUIRES)
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_built_wheels_are_found_and_read(dist_dir: Path) -> None:
    env, oracle = find_built_sources(dist_dir)
    assert (env.kind, env.distribution, env.version) == ("wheel", ENV_DIST, "0.1.0")
    assert (oracle.kind, oracle.distribution) == ("wheel", ORACLE_DIST)
    assert env.requires == ENV_REQUIRES
    assert env.sha256 is not None and len(env.sha256) == 64


def test_stage_is_self_contained(dist_dir: Path, tmp_path: Path) -> None:
    env, oracle = find_built_sources(dist_dir)
    staged = stage_env(env, oracle, tmp_path / "stage")
    stage = staged.stage_dir
    assert staged.version == "0.1.0"
    assert (stage / "router_frontier_rl" / "__init__.py").is_file()
    assert (stage / "router_oracle" / "table.py").is_file()
    assert (stage / "router_frontier_rl" / "data" / "oracle_table.json").is_file()
    assert not list(stage.rglob("__pycache__"))
    project = tomllib.loads((stage / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert (project["name"], project["version"]) == ("router-frontier-rl", "0.1.0")
    assert project["dependencies"] == list(staged.requirements)
    # Both builds' third-party requirements, sorted, nothing first-party.
    assert staged.requirements == ("pydantic>=2", "tqdm", "verifiers>=0.4.0")
    # `prime env push` needs a package directory (with __init__.py) right under the pushed path.
    assert any((d / "__init__.py").is_file() for d in stage.iterdir() if d.is_dir())


def test_wheels_sdists_and_sources_stage_the_same_code(dist_dir: Path, tmp_path: Path) -> None:
    wheels = find_built_sources(dist_dir)
    sdists = (
        sdist_source(make_sdist(tmp_path, ENV_ROOT, "router_frontier_rl", ENV_DIST, "0.1.0", ENV_REQUIRES)),
        sdist_source(
            make_sdist(tmp_path, ORACLE_ROOT, "router_oracle", ORACLE_DIST, "0.1.0", ORACLE_REQUIRES)
        ),
    )
    dirs = (dir_source(ENV_ROOT, ENV_DIST), dir_source(ORACLE_ROOT, ORACLE_DIST))
    trees = []
    for name, (env, oracle) in {"w": wheels, "s": sdists, "d": dirs}.items():
        staged = stage_env(env, oracle, tmp_path / name, version="0.1.0")
        tree = _tree(staged.stage_dir)
        trees.append({k: v for k, v in tree.items() if k not in ("pyproject.toml", "README.md")})
    assert trees[0] == trees[1] == trees[2]


def test_staging_is_deterministic_and_replaces_its_own_dir(dist_dir: Path, tmp_path: Path) -> None:
    env, oracle = find_built_sources(dist_dir)
    stage = tmp_path / "stage"
    first = _tree(stage_env(env, oracle, stage).stage_dir)
    (stage / "leftover.txt").write_text("old", encoding="utf-8")
    assert _tree(stage_env(env, oracle, stage).stage_dir) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stage"]  # no temp dirs left


def test_staging_refuses_a_foreign_directory(dist_dir: Path, tmp_path: Path) -> None:
    env, oracle = find_built_sources(dist_dir)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "precious.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(StagingError, match="not a staging directory"):
        stage_env(env, oracle, tmp_path / "mine")
    assert (tmp_path / "mine" / "precious.txt").is_file()
    assert not (tmp_path / "mine" / STAGE_MARKER).exists()


def test_missing_or_ambiguous_builds_are_clear_errors(dist_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(StagingError, match=r"no such directory.*pants package"):
        find_built_sources(tmp_path / "nowhere")
    only_env = tmp_path / "only_env"
    only_env.mkdir()
    make_wheel(only_env, ENV_ROOT, "router_frontier_rl", ENV_DIST, "0.1.0", ENV_REQUIRES)
    with pytest.raises(StagingError, match="no wheel or sdist of router-oracle"):
        find_built_sources(only_env)
    make_wheel(only_env, ORACLE_ROOT, "router_oracle", ORACLE_DIST, "0.1.0", ORACLE_REQUIRES)
    make_wheel(only_env, ENV_ROOT, "router_frontier_rl", ENV_DIST, "0.0.9", ENV_REQUIRES)
    with pytest.raises(StagingError, match="several builds of router-frontier-rl"):
        find_built_sources(only_env)
    with pytest.raises(StagingError, match="has no version"):
        stage_env(dir_source(ENV_ROOT, ENV_DIST), dir_source(ORACLE_ROOT, ORACLE_DIST), tmp_path / "s")


def test_bare_verifiers_requirement_gets_the_v1_pin() -> None:
    env = PackageSource(
        kind="dir", path=Path("e"), distribution=ENV_DIST, version=None, requires=("verifiers", "numpy>=1")
    )
    oracle = PackageSource(kind="dir", path=Path("o"), distribution=ORACLE_DIST, version=None)
    assert staged_requirements(env, oracle) == ("numpy>=1", "pydantic>=2", "verifiers>=0.4.0")


def _third_party_paths() -> list[str]:
    """This interpreter's import path minus every directory that holds first-party code."""
    keep = []
    for entry in sys.path:
        p = Path(entry or ".").resolve()
        if p.is_dir() and not any((p / pkg).exists() for pkg in FIRST_PARTY):
            keep.append(str(p))
    return keep


CHECK = r"""
import importlib.metadata as md, json, sys, tomllib
import router_frontier_rl, router_oracle
import verifiers.v1 as vf

venv = sys.argv[1]
for module in (router_frontier_rl, router_oracle):
    assert module.__file__.startswith(venv), module.__file__
env_block = tomllib.load(open(sys.argv[2], "rb"))["orchestrator"]["train"]["source"][0]["env"]
env_cfg = vf.resolve_env_config(env_block)
tasks = list(vf.load_taskset(env_cfg.taskset).load())
print(json.dumps({
    "tasks": len(tasks),
    "config": type(env_cfg.taskset).__name__,
    "requires": md.requires("router-frontier-rl"),
}))
"""


@pytest.mark.e2e
def test_staged_wheel_installs_alone_and_loads_the_env(tmp_path: Path) -> None:
    staged = stage_env(
        dir_source(ENV_ROOT, ENV_DIST),
        dir_source(ORACLE_ROOT, ORACLE_DIST),
        tmp_path / "stage",
        version="0.1.0",
    )
    env = dict(os.environ, UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_NO_CONFIG="1")
    env.pop("PYTHONPATH", None)
    # What `prime env push` runs (uv build --wheel); offline works because uv builds uv_build itself.
    uv = [sys.executable, "-m", "uv"]
    subprocess.run(
        [
            *uv,
            "build",
            "--wheel",
            "--offline",
            "--python",
            sys.executable,
            "--out-dir",
            str(tmp_path / "out"),
        ],
        cwd=staged.stage_dir,
        env=env,
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "out").glob("router_frontier_rl-0.1.0-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "router_oracle/table.py" in names and "router_frontier_rl/data/oracle_table.json" in names

    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = target / "bin" / "python"
    subprocess.run(
        [*uv, "pip", "install", "--python", str(python), "--no-deps", "--offline", str(wheel)],
        env=env,
        check=True,
        capture_output=True,
    )
    # The clean venv sees the third-party packages (verifiers, pydantic, ...) but no repo source.
    (site,) = (target / "lib").glob("python3*/site-packages")
    third_party = _third_party_paths()
    (site / "_third_party.pth").write_text("\n".join(third_party) + "\n", encoding="utf-8")

    proc = subprocess.run(
        [str(python), "-I", "-c", CHECK, str(target.resolve()), str(shipped_path("smoke"))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["config"] == "RouterConfig"
    assert result["tasks"] > 100  # the train split of the bundled 500-task table, upsampled
    assert not any(r.lower().startswith("router-oracle") for r in result["requires"])
