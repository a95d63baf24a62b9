"""The local sandbox: every shell command of an agentic episode on the subprocess runtime runs under
bubblewrap (`bwrap`), so the agent sees its repository and the system's programs, and nothing else.

Why the bash tool's command, not the runtime: verifiers' subprocess runtime (0.4.0) runs the harness's
chat program as a plain host process and has no hook for a command prefix; that program needs the host
network to reach the model endpoint. The agent's commands, though, are all run by that program as
`subprocess.run(["bash", "-c", command])`, found on PATH. The harness therefore launches the program
with a PATH whose first directory holds a `bash` that is this module's wrapper: it `exec`s
`bwrap ... -- /bin/bash "$@"`. The program itself (verifiers' code, holding the endpoint's secret)
stays outside; each command the model asks for runs inside, where:

- the root is an empty tmpfs with only /usr (and the /bin, /lib... links or binds), a few files of /etc
  that programs need to start (loader cache, passwd/group, alternatives), a fresh /proc of its own PID
  namespace, a minimal /dev and a private, empty /tmp;
- the rollout's copy of the repository is bound read-only at its own path (the working directory),
  with the object directories its `.git` borrows from (`git clone --shared`) read-only too;
- every Python installation's site-packages / dist-packages under /usr is covered by an empty tmpfs,
  and nothing else of the host (no /home, /root, /work, /opt, /srv, /var, /mnt, the env's data, the
  virtualenv, the oracle table) is mounted at all;
- the environment is cleared (`--clearenv`): PATH, HOME=/tmp and LANG only;
- network, IPC, UTS and PID namespaces are new: no interface but a loopback of its own;
- it dies with its parent (`--die-with-parent`) and has no controlling terminal (`--new-session`).

Limits: the host kernel is shared (bubblewrap is namespaces, not a VM); /usr and the /etc files
above are visible (programs, not data); a `git clone --shared` checkout borrows the source clone's
object directory, whose objects (later commits included, though no ref names them) can be listed.
"""

from __future__ import annotations

import functools
import glob
import os
import shlex
import shutil
import site
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BWRAP_MISSING = (
    "repo_access on the subprocess runtime runs the agent's commands under bubblewrap, and `bwrap` is "
    "not on PATH: install it (Debian/Ubuntu: apt-get install -y bubblewrap)"
)

SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""PATH inside the sandbox (the only variables set there are PATH, HOME and LANG)."""

_ROOT_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level system directories: a link into /usr on merged-/usr systems (recreated as the same link),
else bound read-only."""

_ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "passwd",
    "group",
    "nsswitch.conf",
    "localtime",
    "alternatives",
)
"""What of /etc the sandbox sees: enough for programs to load and name users, no host configuration."""


class SandboxError(RuntimeError):
    """The sandbox cannot run here: the message says why and what to install or change."""


def bwrap() -> str:
    """The `bwrap` executable, or a SandboxError saying how to install it."""
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxError(BWRAP_MISSING)
    return found


def hidden_python_dirs() -> list[str]:
    """Every site-packages / dist-packages directory under /usr (covered by an empty tmpfs)."""
    patterns = ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages")
    found = {p for pattern in patterns for p in glob.glob(pattern)}
    here = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    found |= {p for p in here if p.startswith("/usr/")}
    return sorted(p for p in found if os.path.isdir(p))


def _system_binds() -> Iterator[str]:
    yield from ("--ro-bind", "/usr", "/usr")
    for name in _ROOT_DIRS:
        host = Path("/") / name
        if host.is_symlink():
            yield from ("--symlink", os.readlink(host), str(host))
        elif host.is_dir():
            yield from ("--ro-bind", str(host), str(host))
    for name in _ETC_FILES:
        yield from ("--ro-bind-try", f"/etc/{name}", f"/etc/{name}")
    for path in hidden_python_dirs():
        yield from ("--tmpfs", path)


def borrowed_object_dirs(repo: Path) -> list[Path]:
    """The object directories `repo/.git` borrows (its `objects/info/alternates`), which git needs."""
    alternates = repo / ".git" / "objects" / "info" / "alternates"
    if not alternates.is_file():
        return []
    out = []
    for line in alternates.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            path = Path(line) if os.path.isabs(line) else (repo / ".git" / "objects" / line)
            if path.is_dir():
                out.append(path.resolve())
    return out


def bwrap_argv(workdir: Path) -> list[str]:
    """The bwrap command line (up to `--`) that confines one shell command to `workdir`, read-only."""
    workdir = workdir.resolve()
    argv = [
        bwrap(),
        "--unshare-all",  # net, pid, ipc, uts, cgroup (user where possible)
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv", "PATH", SANDBOX_PATH,
        "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8",
        *_system_binds(),
        "--proc", "/proc",
        "--dev", "/dev",
        "--tmpfs", "/tmp",
    ]  # fmt: skip
    for objects in borrowed_object_dirs(workdir):
        argv += ["--ro-bind", str(objects), str(objects)]
    argv += ["--ro-bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    return argv


def wrapper_script(workdir: Path) -> str:
    """The `bash` the agent's program finds first on PATH: the real bash, inside the sandbox."""
    # `env -i`: bwrap stays in the sandbox's PID namespace as its init, and its /proc/1/environ would
    # show the host's variables (--clearenv only clears the command's).
    command = " ".join(
        shlex.quote(a) for a in ["/usr/bin/env", "-i", *bwrap_argv(workdir), "--", "/bin/bash"]
    )
    return f'#!/bin/sh\n# router-frontier-rl: the agent\'s shell, under bubblewrap\nexec {command} "$@"\n'


@functools.cache
def check_bwrap_works() -> None:
    """Run `true` in the sandbox once per process: a machine without bwrap, or whose kernel refuses its
    namespaces (some containers), is one SandboxError before any episode starts."""
    with tempfile.TemporaryDirectory(prefix="rfrl-sandbox-probe-") as tmp:
        argv = [*bwrap_argv(Path(tmp)), "--", "/bin/sh", "-c", "true"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(f"bubblewrap cannot run here: {exc}") from exc
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.split())[-300:] or f"exit {proc.returncode}"
        raise SandboxError(
            f"bubblewrap cannot create its sandbox on this machine ({detail}); run where user/network "
            "namespaces are allowed (e.g. as root, or with kernel.unprivileged_userns_clone=1), or use "
            "a container runtime"
        )


@contextmanager
def sandboxed_path(workdir: Path) -> Iterator[str]:
    """A PATH value whose first directory holds the sandboxing `bash` for `workdir` (removed after)."""
    check_bwrap_works()
    with tempfile.TemporaryDirectory(prefix="rfrl-sandbox-") as tmp:
        shim = Path(tmp) / "bash"
        shim.write_text(wrapper_script(workdir), encoding="utf-8")
        shim.chmod(0o755)
        yield os.pathsep.join([tmp, os.environ.get("PATH", os.defpath)])
