"""`router-train launch`: placeholder until its issue lands (owner replaces this module)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("launch", help="(not built yet)")
    p.set_defaults(func=lambda args: 2)
