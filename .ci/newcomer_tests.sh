#!/usr/bin/env bash
# The README's test command as a newcomer runs it: `./pants test ::` (the fast tier) on a machine where
# nothing installed bubblewrap, and none of CI's test variables are set. It must pass, with the agent
# sandbox's tests skipped, each naming the install line (packages/env/tests/system_tools.py), so a
# newcomer's red suite cannot hide behind CI's green one (CI installs bubblewrap for its own test step).
#
# Where `bwrap` is installed (CI, after its install step) it is hidden: in a private mount namespace,
# /dev/null (not executable) is bound over each `bwrap` on PATH and on os.defpath (where Python's
# shutil.which looks when a process has no PATH). Pants runs without its daemon there: a daemon started
# outside the namespace would run the tests where bwrap is still visible. As root that needs only
# `unshare --mount`; otherwise a user namespace maps this user to root for the mounts.
#
# `--force`: Pants' cache cannot tell a machine with bwrap from one without (the tests' inputs are the
# same), so an earlier run's results must not be replayed. Reports go to their own folder.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

reports=dist/newcomer/reports

# Where the tests look for bwrap: shutil.which on PATH, or on os.defpath where a process has no PATH.
# (bash's `command -v` is no test: it names a non-executable file where it finds no executable one.)
bwrap_visible() {
  python3 -c 'import os, shutil, sys; sys.exit(not any(shutil.which("bwrap", path=p) for p in (None, os.defpath)))'
}

run_tests() {
  rm -rf "$reports"
  env -u ROUTER_REQUIRE_SANDBOX -u ROUTER_REQUIRE_SERVICES -u ROUTER_PRIME_RL_PYTHON -u UV_CACHE_DIR \
    ./pants --no-pantsd test --force --test-report --test-report-dir="$reports" ::
}

if [ "${1-}" = "--hide" ]; then
  # Inside the private mount namespace (below): cover each bwrap, then run the tests.
  shift
  for path in "$@"; do
    mount --bind /dev/null "$path"
  done
  if bwrap_visible; then
    echo "bwrap is still visible: the newcomer check cannot hide it" >&2
    exit 1
  fi
  run_tests
  exit
fi

bwraps=()
IFS=: read -r -a dirs <<<"$PATH:/bin:/usr/bin"
for dir in "${dirs[@]}"; do
  if [ -n "$dir" ] && [ -f "$dir/bwrap" ] && [ -x "$dir/bwrap" ]; then
    real=$(realpath "$dir/bwrap")
    case " ${bwraps[*]-} " in *" $real "*) ;; *) bwraps+=("$real") ;; esac
  fi
done

if [ ${#bwraps[@]} -eq 0 ]; then
  echo "no bwrap on this machine: running as is"
  run_tests
else
  echo "hiding ${bwraps[*]} in a private mount namespace"
  userns=()
  [ "$(id -u)" -eq 0 ] || userns=(--user --map-root-user)
  unshare "${userns[@]}" --mount --propagation private -- "$PWD/.ci/newcomer_tests.sh" --hide "${bwraps[@]}"
fi

# It passed (Pants exits non-zero on any failure); now check the sandbox's tests skipped, saying why.
python3 - "$reports" <<'PY'
import glob
import sys
import xml.etree.ElementTree as ET

INSTALL = "apt-get install -y bubblewrap"
# A test that runs the sandbox in the fast tier: it must be among the skipped.
MUST_SKIP = ("test_env_sandbox", "test_one_command_sees_its_repository_and_nothing_else")

reports = glob.glob(f"{sys.argv[1]}/*.xml")
passed = failed = 0
skipped: list[tuple[str, str, str]] = []
for path in reports:
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")[-1]
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif (skip := case.find("skipped")) is not None:
            skipped.append((module, case.get("name", ""), skip.get("message", "")))
        else:
            passed += 1
print(f"newcomer: {len(reports)} pytest runs: {passed} passed, {failed} failed, {len(skipped)} skipped")
for module, name, message in sorted(skipped):
    print(f"  skipped {module}::{name}: {message}")
problems = []
if failed or passed == 0:
    problems.append(f"{failed} failed, {passed} passed")
if not any((m, n) == MUST_SKIP for m, n, _ in skipped):
    problems.append(f"{'::'.join(MUST_SKIP)} did not skip (was bubblewrap hidden?)")
unnamed = [f"{m}::{n}" for m, n, msg in skipped if "bubblewrap" in msg and INSTALL not in msg]
if unnamed:
    problems.append(f"skipped without naming `{INSTALL}`: {', '.join(unnamed)}")
for problem in problems:
    print(f"newcomer check failed: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
