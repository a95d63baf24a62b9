"""The `router-train` console script: Ctrl-C during its seconds-long start-up is one line, exit 130
(see `router_oracle.infra.console_entry`)."""

from __future__ import annotations

from router_oracle.infra.console_entry import run


def main() -> int:
    """The `router-train` console script."""
    return run("router_train.cli:main", "router-train")
