"""CI's reading of the pytest runs' JUnit reports (one file per Pants batch of test files).

  test_reports.py newcomer DIR
      The newcomer run (`.ci/newcomer_tests.sh`: the fast tier, system tools hidden): nothing failed,
      something passed, and every skip names its install line; the sandbox's, PostgreSQL's and the
      browser's tests are among the skipped, so the tools really were hidden.
  test_reports.py required NEWCOMER_DIR REQUIRED_DIR
      The run of the end-to-end tier and the `system` tests with the tools required: nothing failed or
      skipped, and every test the newcomer run skipped passed here. Prints CI's closing count.

Exit 1 with one line per problem on stderr; standard library only (it runs before any venv exists).
"""

from __future__ import annotations

import glob
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

INSTALL = "apt-get install -y"
"""Every skip of the newcomer run names an install line (system_tools.py, required_service.py)."""

MUST_SKIP = {
    "test_env_sandbox::test_one_command_sees_its_repository_and_nothing_else": "bubblewrap",
    "test_train_serve_store::test_every_operation_of_the_store[postgresql]": "PostgreSQL",
    "test_train_serve_dashboard::test_the_dashboard_in_a_browser_shows_the_feedback_figures": "Chromium",
}
"""One test per hidden tool that must skip in the newcomer run (else the tool was not hidden)."""


@dataclass
class Reports:
    """The test cases of one folder of reports, by `module::name` (module: the test file's stem)."""

    runs: int = 0
    passed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)
    """Skipped test -> its reason."""
    files: set[str] = field(default_factory=set)

    def line(self) -> str:
        return (
            f"{self.runs} pytest runs: {len(self.passed)} passed, {len(self.failed)} failed, "
            f"{len(self.skipped)} skipped"
        )


def read(folder: str) -> Reports:
    out = Reports()
    for path in sorted(glob.glob(f"{folder}/*.xml")):
        out.runs += 1
        for case in ET.parse(path).getroot().iter("testcase"):
            # classname: packages.env.tests.test_env_split[.TestClass]
            parts = case.get("classname", "").split(".")
            cut = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
            out.files.add(".".join(parts[: cut + 1]))
            test = f"{parts[cut]}::{'.'.join([*parts[cut + 1 :], case.get('name', '')])}"
            if case.find("failure") is not None or case.find("error") is not None:
                out.failed.add(test)
            elif (skip := case.find("skipped")) is not None:
                out.skipped[test] = skip.get("message", "")
            else:
                out.passed.add(test)
    return out


def newcomer_problems(run: Reports) -> list[str]:
    problems = []
    if run.failed or not run.passed:
        problems.append(f"{len(run.failed)} failed, {len(run.passed)} passed")
    for test, tool in MUST_SKIP.items():
        if test not in run.skipped:
            problems.append(f"{test} did not skip (was {tool} hidden?)")
    unnamed = sorted(t for t, reason in run.skipped.items() if INSTALL not in reason)
    if unnamed:
        problems.append(f"skipped without naming an `{INSTALL}` line: {', '.join(unnamed)}")
    return problems


def required_problems(newcomer: Reports, required: Reports) -> list[str]:
    problems = []
    if required.failed or required.skipped or not required.passed:
        problems.append(f"required run: {required.line()}")
    uncovered = sorted(set(newcomer.skipped) - required.passed)
    if uncovered:
        problems.append(
            "skipped by the newcomer run and not passed with the tools required (is it marked "
            f"`system`?): {', '.join(uncovered)}"
        )
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["newcomer"] and len(argv) == 2:
        run = read(argv[1])
        print(f"newcomer: {run.line()}")
        for test, reason in sorted(run.skipped.items()):
            print(f"  skipped {test}: {reason}")
        problems = newcomer_problems(run)
    elif argv[:1] == ["required"] and len(argv) == 3:
        newcomer, required = read(argv[1]), read(argv[2])
        print(f"end-to-end tier and system tests, tools required: {required.line()}")
        problems = required_problems(newcomer, required)
        passed = newcomer.passed | required.passed
        print(
            f"tests: {len(passed)} passed, {len(newcomer.failed | required.failed)} failed, "
            f"{len(set(newcomer.skipped) - required.passed)} skipped, in "
            f"{len(newcomer.files | required.files)} test files"
        )
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for problem in problems:
        print(f"test reports: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
