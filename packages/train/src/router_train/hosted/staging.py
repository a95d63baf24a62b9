"""Stage the environment for `prime env push` as ONE self-contained package.

The hub installs a pushed env and its requirements from PyPI, where `router-oracle` is not
published. So the staged distribution is `router-frontier-rl` carrying both import packages,
`router_frontier_rl` and `router_oracle`, and no requirement on `router-oracle`.

Inputs are what the build produced (`./pants package` wheels or sdists in dist/), so what is
pushed is what was built; source directories are accepted too (tests, or a checkout without a
build). All three kinds go through `read_package_files`, and `stage_env` does not care which.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Literal

from router_oracle.infra.atomic_file import file_in_the_way
from router_oracle.infra.file_hash import sha256_file
from router_oracle.infra.frozen_model import FrozenModel

ENV_DIST = "router-frontier-rl"
ORACLE_DIST = "router-oracle"
ENV_PACKAGE = "router_frontier_rl"
ORACLE_PACKAGE = "router_oracle"

BASE_REQUIREMENTS = {"verifiers": "verifiers>=0.4.0", "pydantic": "pydantic>=2"}
"""Always required; a lower bound >= 0.2.0 on verifiers makes `prime env push` tag the env v1."""

UV_BUILD_REQUIREMENT = "uv_build>=0.9.0,<1"
"""Build backend of the staged package: `uv build` (what `prime env push` runs) builds it offline."""

BUILD_HINT = "./pants package packages/oracle:oracle packages/env:env"
"""How to produce the wheels a launch stages (written into errors)."""

STAGE_MARKER = ".router-train-stage"
"""File that marks a directory as ours, so re-staging may replace it and nothing else."""

_SKIP_PARTS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PAREN_SPEC = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\[\],-]*)\s*\(([^)]*)\)\s*(;.*)?$")


class StagingError(ValueError):
    """Inputs that cannot be staged: the message names the file or directory and the problem."""


_PEP440 = re.compile(
    r"^v?(?:\d+!)?\d+(?:\.\d+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?"
    r"(?:-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?\d*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$",
    re.IGNORECASE,
)
"""A version PEP 440 accepts (its appendix's pattern, anchored): what the staged pyproject must carry."""


def check_version(version: str) -> str:
    """`version` if it is a PEP 440 version (else `uv build` rejects the staged package at push time)."""
    if not _PEP440.match(version.strip()) or version != version.strip():
        raise StagingError(f"version {version!r} is not a PEP 440 version (e.g. 0.1.0)")
    return version


def normalize_name(name: str) -> str:
    """PEP 503 normalized distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


class PackageSource(FrozenModel):
    """Where one distribution's code comes from."""

    kind: Literal["wheel", "sdist", "dir"]
    """A built wheel, a built sdist, or a source root (the directory holding the import package)."""
    path: Path
    """The wheel, the sdist, or the source root."""
    distribution: str
    """Distribution name, e.g. `router-frontier-rl`."""
    version: str | None
    """Version from the built metadata; None for a source root."""
    requires: tuple[str, ...] = ()
    """Requires-Dist lines from the built metadata (empty for a source root)."""
    sha256: str | None = None
    """Digest of the wheel or sdist file (None for a source root)."""


class StagedEnv(FrozenModel):
    """What `stage_env` produced."""

    stage_dir: Path
    """The directory to pass to `prime env push -p`."""
    version: str
    """Version written into the staged pyproject.toml."""
    requirements: tuple[str, ...]
    """Its dependencies (never `router-oracle`)."""
    sources: tuple[PackageSource, ...]
    """The env and oracle inputs it was staged from."""
    files: int
    """Number of package files copied."""


def _built_source(kind: Literal["wheel", "sdist"], path: Path, metadata: bytes) -> PackageSource:
    """A build as a source: its core metadata gives name, version and requirements."""
    msg = Parser().parsestr(metadata.decode("utf-8"))
    return PackageSource(
        kind=kind,
        path=path,
        distribution=normalize_name(msg["Name"] or ""),
        version=msg["Version"] or "",
        requires=tuple(msg.get_all("Requires-Dist") or []),
        sha256=sha256_file(path),
    )


def wheel_source(path: Path) -> PackageSource:
    """A built wheel as a source; its METADATA gives name, version and requirements."""
    try:
        with zipfile.ZipFile(path) as zf:
            meta = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if len(meta) != 1:
                raise StagingError(f"{path}: not a wheel (expected one *.dist-info/METADATA)")
            metadata = zf.read(meta[0])
    except (zipfile.BadZipFile, OSError) as e:
        raise StagingError(f"{path}: cannot read wheel: {e}") from None
    return _built_source("wheel", path, metadata)


def sdist_source(path: Path) -> PackageSource:
    """A built sdist (.tar.gz) as a source; its PKG-INFO gives name, version and requirements."""
    try:
        with tarfile.open(path, "r:gz") as tf:
            infos = [m for m in tf.getmembers() if m.isfile() and m.name.count("/") == 1]
            pkg_info = [m for m in infos if m.name.endswith("/PKG-INFO")]
            if len(pkg_info) != 1:
                raise StagingError(f"{path}: not an sdist (expected one top-level */PKG-INFO)")
            f = tf.extractfile(pkg_info[0])
            assert f is not None  # a regular file member always has content
            metadata = f.read()
    except (tarfile.TarError, OSError) as e:
        raise StagingError(f"{path}: cannot read sdist: {e}") from None
    return _built_source("sdist", path, metadata)


def dir_source(source_root: Path, distribution: str) -> PackageSource:
    """A source root (e.g. packages/env/src) as a source for `distribution`."""
    return PackageSource(
        kind="dir", path=source_root, distribution=normalize_name(distribution), version=None
    )


def _keep(rel: str) -> bool:
    parts = rel.split("/")
    return not (_SKIP_PARTS & set(parts)) and not rel.endswith(_SKIP_SUFFIXES)


def read_package_files(source: PackageSource, package: str) -> dict[str, bytes]:
    """Every file of import package `package` in `source`, keyed by path relative to the package's parent."""
    files: dict[str, bytes] = {}
    if source.kind == "dir":
        root = source.path / package
        if not (root / "__init__.py").is_file():
            raise StagingError(f"{source.path}: no package {package}/ (expected {package}/__init__.py)")
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(source.path).as_posix()
            if p.is_file() and _keep(rel):
                files[rel] = p.read_bytes()
    elif source.kind == "wheel":
        with zipfile.ZipFile(source.path) as zf:
            for name in zf.namelist():
                if name.startswith(f"{package}/") and not name.endswith("/") and _keep(name):
                    files[name] = zf.read(name)
    else:
        with tarfile.open(source.path, "r:gz") as tf:
            members = [m for m in tf.getmembers() if m.isfile()]
            # An sdist nests the package under `<name>-<version>/` and maybe `src/`: use the
            # shallowest directory that holds `<package>/__init__.py`.
            inits = sorted((m.name for m in members if m.name.endswith(f"/{package}/__init__.py")), key=len)
            if inits:
                prefix = inits[0][: -len("__init__.py")]
                base = prefix[: -len(f"{package}/")]
                for m in members:
                    if m.name.startswith(prefix) and _keep(m.name):
                        f = tf.extractfile(m)
                        assert f is not None
                        files[m.name[len(base) :]] = f.read()
    if f"{package}/__init__.py" not in files:
        raise StagingError(f"{source.path}: holds no {package}/__init__.py")
    return files


def find_built_sources(dist_dir: Path) -> tuple[PackageSource, PackageSource]:
    """The env and oracle builds in `dist_dir` (a wheel preferred over an sdist).

    Exactly one build of each is expected: with several versions side by side it is not clear
    which one was meant, so that is an error naming them.
    """
    if not dist_dir.is_dir():
        raise StagingError(f"{dist_dir}: no such directory; build the env first ({BUILD_HINT})")
    found: dict[str, list[PackageSource]] = {ENV_DIST: [], ORACLE_DIST: []}
    for pattern, read in (("*.whl", wheel_source), ("*.tar.gz", sdist_source)):
        for path in sorted(dist_dir.glob(pattern)):
            source = read(path)
            if source.distribution in found:
                found[source.distribution].append(source)
    chosen = []
    for dist in (ENV_DIST, ORACLE_DIST):
        candidates = found[dist]
        wheels = [s for s in candidates if s.kind == "wheel"]
        pick = wheels or candidates
        if not pick:
            raise StagingError(f"{dist_dir}: no wheel or sdist of {dist}; build it first ({BUILD_HINT})")
        if len(pick) > 1:
            names = ", ".join(s.path.name for s in pick)
            raise StagingError(f"{dist_dir}: several builds of {dist} ({names}); remove the stale ones")
        chosen.append(pick[0])
    return chosen[0], chosen[1]


def _plain_requirement(req: str) -> str:
    """`pydantic (>=2)` (old METADATA style, as setuptools writes it) -> `pydantic>=2`."""
    m = _PAREN_SPEC.match(req)
    if not m:
        return req.strip()
    name, spec, marker = m.groups()
    return f"{name}{spec.replace(' ', '')}" + (f" {marker.strip()}" if marker else "")


def staged_requirements(env: PackageSource, oracle: PackageSource) -> tuple[str, ...]:
    """Union of both builds' requirements, minus the first-party ones, plus BASE_REQUIREMENTS.

    Sorted by name so staging is deterministic. A bare `verifiers` (no version) is replaced by
    the pinned base one, which is what makes the hub treat the env as verifiers v1.
    """
    first_party = {ENV_DIST, ORACLE_DIST}
    by_name: dict[str, str] = {}
    for raw in env.requires + oracle.requires:
        req = _plain_requirement(raw)
        if "extra ==" in req.replace('"', "").replace("'", ""):
            continue  # optional extras are not needed to load the env
        m = _REQ_NAME.match(req)
        if not m:
            raise StagingError(f"{env.path}: cannot read requirement {req!r}")
        name = normalize_name(m.group(1))
        if name in first_party:
            continue
        bare = req == m.group(1)
        if name not in by_name or not bare:
            by_name[name] = req
    for name, req in BASE_REQUIREMENTS.items():
        if name not in by_name or by_name[name] == name:
            by_name[name] = req
    return tuple(by_name[n] for n in sorted(by_name))


def _pyproject(version: str, requirements: tuple[str, ...]) -> str:
    deps = "".join(f'    "{r}",\n' for r in requirements)
    return (
        "# Staged by `router-train launch` for `prime env push`: one self-contained distribution\n"
        "# with router_frontier_rl and router_oracle (router-oracle is not on PyPI).\n"
        "[project]\n"
        f'name = "{ENV_DIST}"\n'
        f'version = "{version}"\n'
        'description = "Route SWE-bench tasks to the frontier model an oracle table picks."\n'
        'readme = "README.md"\n'
        'requires-python = ">=3.11"\n'
        f"dependencies = [\n{deps}]\n"
        "\n"
        "[build-system]\n"
        f'requires = ["{UV_BUILD_REQUIREMENT}"]\n'
        'build-backend = "uv_build"\n'
        "\n"
        "[tool.uv.build-backend]\n"
        f'module-name = ["{ENV_PACKAGE}", "{ORACLE_PACKAGE}"]\n'
        'module-root = ""\n'
    )


def _readme(version: str, sources: tuple[PackageSource, ...]) -> str:
    lines = [
        f"# {ENV_DIST} {version}",
        "",
        "A verifiers v1 environment: route a SWE-bench Verified task to the frontier model",
        "an oracle table says solves it, at the lowest cost. `vf-eval router-frontier-rl`.",
        "",
        "This package bundles `router_oracle` (the oracle-table schema and rule) so that it",
        "installs from PyPI alone. Staged from:",
        "",
    ]
    for s in sources:
        what = f"{s.path.name} (sha256 {s.sha256})" if s.sha256 else f"source dir {s.path.name}/"
        lines.append(f"- {s.distribution} {s.version or '(source)'}: {what}")
    return "\n".join(lines) + "\n"


def stage_dir_problem(stage_dir: Path) -> str | None:
    """Why `stage_dir` cannot take a staging (a file, under a file, someone else's directory), or None."""
    blocker = file_in_the_way(stage_dir)
    if blocker is not None:
        where = "is a file" if blocker == stage_dir else f"is under {blocker}, a file"
        return f"{stage_dir}: the staging directory {where}, not a directory"
    if stage_dir.exists() and not (stage_dir / STAGE_MARKER).is_file():
        return f"{stage_dir}: exists and is not a staging directory; refusing to replace it"
    return None


def stage_env(
    env: PackageSource, oracle: PackageSource, stage_dir: Path, *, version: str | None = None
) -> StagedEnv:
    """Write the self-contained package into `stage_dir` (replacing an earlier staging).

    `version` defaults to the env build's version; a source root has none, so pass it then.
    The directory is built next to its final place and swapped in, so a failure leaves no
    half-written stage.
    """
    resolved = version or env.version
    if not resolved:
        raise StagingError(f"{env.path}: a source directory has no version; pass version=")
    check_version(resolved)
    problem = stage_dir_problem(stage_dir)
    if problem:
        raise StagingError(problem)
    files = read_package_files(env, ENV_PACKAGE) | read_package_files(oracle, ORACLE_PACKAGE)
    requirements = staged_requirements(env, oracle)
    sources = (env, oracle)
    stage_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{stage_dir.name}.", dir=stage_dir.parent))
    try:
        for rel in sorted(files):
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[rel])
        (tmp / "pyproject.toml").write_text(_pyproject(resolved, requirements), encoding="utf-8")
        (tmp / "README.md").write_text(_readme(resolved, sources), encoding="utf-8")
        (tmp / STAGE_MARKER).write_text("staged by router-train; safe to delete\n", encoding="utf-8")
        if stage_dir.exists():
            shutil.rmtree(stage_dir)
        tmp.rename(stage_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return StagedEnv(
        stage_dir=stage_dir, version=resolved, requirements=requirements, sources=sources, files=len(files)
    )
