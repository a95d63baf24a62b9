#!/usr/bin/env bash
# Install prime-rl's config package (a source snapshot in ../shared/vendor: prime-rl is not on PyPI)
# into a CPython 3.12 venv cached under ~/.cache, and print that venv's python. The schema-check tests
# run TOMLs through its RLConfig when ROUTER_PRIME_RL_PYTHON names it (.ci/run sets it), else skip.
# Usage: .ci/prime_rl_configs.sh TARBALL
set -euo pipefail
tarball=$1
[ -f "$tarball" ] || { echo "prime_rl_configs.sh: $tarball: no such file" >&2; exit 2; }
key=$(sha256sum "$tarball" | cut -c1-16)
venv=${XDG_CACHE_HOME:-$HOME/.cache}/router-frontier-rl/prime-rl-configs-$key
if [ ! -f "$venv/.installed" ]; then
  py312=$(command -v python3.12 || true)
  # A pyenv shim is on PATH even where 3.12 is not selected; it must actually run.
  if [ -n "$py312" ] && ! "$py312" -c "" 2>/dev/null; then py312=""; fi
  if [ -z "$py312" ] && command -v pyenv >/dev/null; then
    py312=$(ls -d "$(pyenv root)"/versions/3.12.*/bin/python 2>/dev/null | sort -V | tail -n 1 || true)
  fi
  [ -n "$py312" ] || { echo "prime_rl_configs.sh: no CPython 3.12 (prime-rl-configs needs ~=3.12)" >&2; exit 3; }
  rm -rf "$venv"
  "$py312" -m venv "$venv"
  # Its dependencies (pydantic, prime-pydantic-config, verifiers, ...) come from PyPI. uv (the lockfile's
  # version) resolves and downloads them in parallel: ~30 s cold where pip took minutes. uv reads a
  # version from a tarball's file name, so it installs the unpacked source directory.
  PIP_CONFIG_FILE=/dev/null "$venv/bin/pip" install --quiet --disable-pip-version-check uv==0.13.9 >&2
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  tar -xzf "$tarball" -C "$src"
  PIP_CONFIG_FILE=/dev/null UV_CACHE_DIR="$venv/.uv-cache" "$venv/bin/uv" pip install --quiet \
    --python "$venv/bin/python" "$src"/*/ >&2
  rm -rf "$venv/.uv-cache"
  "$venv/bin/python" -c "from prime_rl.configs.rl import RLConfig" >&2
  touch "$venv/.installed"
fi
echo "$venv/bin/python"
