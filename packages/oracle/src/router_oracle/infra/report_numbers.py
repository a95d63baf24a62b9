"""How every report of the project writes a number: six decimals, and the tolerance that goes with them."""

from __future__ import annotations

DIGITS = 6
"""Decimals of every rate, cost and share in a report: readable, and byte-stable across platforms."""
EPS = 1e-6
"""Tolerance in USD and in rate: report numbers are rounded to 6 decimals, so closer points are equal."""


def rounded(x: float) -> float:
    """`x` to DIGITS decimals as a plain float; -0.0 becomes 0.0."""
    return round(float(x), DIGITS) + 0.0
