#!/usr/bin/env bash
# The README's test command as a newcomer runs it: `./pants test ::` (the fast tier) on a machine where
# nothing installed the system tools some tests need (bubblewrap for the agent sandbox, PostgreSQL and
# Chromium for the team-service tests), and none of CI's test variables are set. It must pass, with
# those tests skipped, each naming its install line (packages/env/tests/system_tools.py,
# packages/train/tests/required_service.py), so a newcomer's red suite cannot hide behind CI's green one.
# It is CI's one run of the fast tier: `.ci/run` then runs what skipped here (marked `system`) with the
# tools required, and the end-to-end tier, and checks that every test skipped here passed there.
#
# Where the tools are installed (CI, after its install steps) they are hidden: in a private mount
# namespace, /dev/null (not executable) is bound over each `bwrap`, `chromium`, `chromedriver`, `initdb`
# and `pg_ctl` on PATH, on os.defpath (where Python's shutil.which looks when a process has no PATH) and
# under /usr/lib/postgresql (where the PostgreSQL tests look). Pants runs without its daemon there: a
# daemon started outside the namespace would run the tests where the tools are still visible. As root
# that needs only `unshare --mount`; otherwise a user namespace maps this user to root for the mounts.
#
# `--force`: Pants' cache cannot tell a machine with the tools from one without (the tests' inputs are
# the same), so an earlier run's results must not be replayed. Reports go to their own folder.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

reports=dist/newcomer/reports
tools=(bwrap chromium chromedriver initdb pg_ctl)

# The tools still visible as the tests look for them: shutil.which on PATH or on os.defpath, or an
# executable under /usr/lib/postgresql. (bash's `command -v` is no test: it names a non-executable file
# where it finds no executable one.)
visible_tools() {
  python3 - "${tools[@]}" <<'PY'
import glob, os, shutil, sys
for tool in sys.argv[1:]:
    where = [shutil.which(tool, path=p) for p in (None, os.defpath)]
    where += [p for p in glob.glob(f"/usr/lib/postgresql/*/bin/{tool}") if os.access(p, os.X_OK)]
    if any(where):
        print(tool)
PY
}

run_tests() {
  rm -rf "$reports"
  env -u ROUTER_REQUIRE_SANDBOX -u ROUTER_REQUIRE_SERVICES -u ROUTER_PRIME_RL_PYTHON -u UV_CACHE_DIR \
    ./pants --no-pantsd test --force --test-report --test-report-dir="$reports" ::
}

if [ "${1-}" = "--hide" ]; then
  # Inside the private mount namespace (below): cover each tool, then run the tests.
  shift
  for path in "$@"; do
    mount --bind /dev/null "$path"
  done
  still=$(visible_tools)
  if [ -n "$still" ]; then
    echo "still visible: $still; the newcomer check cannot hide them" >&2
    exit 1
  fi
  run_tests
  exit
fi

found=()
IFS=: read -r -a dirs <<<"$PATH:/bin:/usr/bin"
for tool in "${tools[@]}"; do
  for path in "${dirs[@]/%//$tool}" /usr/lib/postgresql/*/bin/"$tool"; do
    if [ "$path" != "/$tool" ] && [ -f "$path" ] && [ -x "$path" ]; then
      real=$(realpath "$path")
      case " ${found[*]-} " in *" $real "*) ;; *) found+=("$real") ;; esac
    fi
  done
done

if [ ${#found[@]} -eq 0 ]; then
  echo "none of ${tools[*]} on this machine: running as is"
  run_tests
else
  echo "hiding ${found[*]} in a private mount namespace"
  userns=()
  [ "$(id -u)" -eq 0 ] || userns=(--user --map-root-user)
  unshare "${userns[@]}" --mount --propagation private -- "$PWD/.ci/newcomer_tests.sh" --hide "${found[@]}"
fi

# It passed (Pants exits non-zero on any failure); now check the tools' tests skipped, naming the line.
python3 .ci/test_reports.py newcomer "$reports"
