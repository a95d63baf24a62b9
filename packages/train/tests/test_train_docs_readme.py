"""The README is the house a newcomer walks into (issue 45, item 1): at most 200 lines, and its code map
names files that exist, so the seven places a newcomer looks for are found from it."""

from __future__ import annotations

import re

from doc_commands import REPO

README = REPO / "README.md"
MAX_LINES = 200
"""The README's length limit; what does not fit goes to docs/, linked."""

PLACES = {
    "tie rule": "packages/oracle/src/router_oracle/tie_rule.py",
    "reward": "packages/env/src/router_frontier_rl/rewards.py",
    "safe default point": "packages/train/src/router_train/scoring/safe_point.py",
    "router kinds": "packages/train/src/router_train/route/kinds/",
    "source registry": "packages/oracle/src/router_oracle/sources/registry.py",
    "feedback estimators": "packages/train/src/router_train/offpolicy/estimators.py",
    "serve store": "packages/train/src/router_train/serve/store_sql.py",
}
"""What the code map must say where it lives (issue 45's goal): a phrase of its line -> the path."""


def code_map() -> dict[str, str]:
    """The README's code map: each `- `path`: phrase` line under `## Code map`, path -> phrase."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Code map\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^- `([^`]+)`: (.+)$", section, flags=re.MULTILINE))


def test_the_readme_is_at_most_200_lines() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"README.md has {lines} lines (at most {MAX_LINES}: move the rest to docs/)"


def test_every_code_map_path_exists() -> None:
    entries = code_map()
    assert len(entries) >= len(PLACES)
    missing = [p for p in entries if not (REPO / p).exists() or (p.endswith("/") and not (REPO / p).is_dir())]
    assert not missing, f"README.md's code map names paths that do not exist: {missing}"


def test_the_code_map_names_the_seven_places() -> None:
    entries = code_map()
    for phrase, path in PLACES.items():
        assert path in entries, f"README.md's code map has no line for {path} ({phrase})"
        assert phrase in entries[path], f"README.md's code map line for {path} does not say '{phrase}'"


def test_every_relative_link_of_the_readme_exists() -> None:
    text = README.read_text(encoding="utf-8")
    targets = {t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t}
    missing = sorted(t for t in targets if t and not (REPO / t).exists())
    assert not missing, f"README.md links to files that do not exist: {missing}"
