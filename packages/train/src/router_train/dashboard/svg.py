"""Small charts as inline SVG text: stacked bars and lines over time buckets, and estimates with their
intervals. Every text drawn is escaped (model names come from configs and records)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 440, 210
"""A time chart's size, CSS pixels."""
LEFT, RIGHT, TOP, BOTTOM = 56, 10, 10, 30
"""Margins around a chart's plot area (axis labels live there)."""
MAX_X_LABELS = 6
"""Bucket labels written under a time chart at most (every k-th bucket)."""
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
"""Okabe-Ito colours, told apart also by colour-blind readers; a model keeps its pool position's."""
Format = Callable[[float], str]


def count(v: float) -> str:
    return f"{v:g}"


def money(v: float) -> str:
    return "$0" if v == 0 else f"${v:.4g}"


def rate(v: float) -> str:
    return f"{v:.2f}"


def colours(models: Sequence[str]) -> dict[str, str]:
    """Each model's colour, by its position in `models` (the pool)."""
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(models)}


def nice_ticks(top: float, steps: int = 4, integer: bool = False) -> list[float]:
    """0 and round steps up to at least `top` (about `steps` of them; whole numbers with `integer`)."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / steps
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    if integer:
        step = float(max(1, math.ceil(step)))
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def _f(x: float) -> str:
    return f"{x:.1f}"


@dataclass(frozen=True)
class Frame:
    """A plot area over `n` buckets with a y axis from 0 to `ticks[-1]`."""

    n: int
    ticks: list[float]
    width: int = WIDTH
    height: int = HEIGHT

    def x(self, i: float) -> float:
        """The left edge of bucket `i`."""
        return LEFT + (self.width - LEFT - RIGHT) * i / max(self.n, 1)

    def y(self, v: float) -> float:
        return self.height - BOTTOM - (self.height - TOP - BOTTOM) * v / self.ticks[-1]

    def axes(self, labels: Sequence[str], fmt: Format, y_title: str) -> list[str]:
        """Grid lines with y tick labels, the x axis and every k-th bucket label."""
        out = []
        for t in self.ticks:
            y = _f(self.y(t))
            out.append(f'<line x1="{LEFT}" x2="{self.width - RIGHT}" y1="{y}" y2="{y}" class="grid"/>')
            out.append(f'<text x="{LEFT - 6}" y="{y}" class="ytick">{escape(fmt(t))}</text>')
        base = _f(self.y(0))
        out.append(f'<line x1="{LEFT}" x2="{self.width - RIGHT}" y1="{base}" y2="{base}" class="axis"/>')
        step = max(1, math.ceil(len(labels) / MAX_X_LABELS))
        for i in range(0, len(labels), step):
            cx = _f(self.x(i + 0.5))
            out.append(f'<text x="{cx}" y="{self.height - 10}" class="xtick">{escape(labels[i])}</text>')
        mid = _f((TOP + self.height - BOTTOM) / 2)
        out.append(
            f'<text x="12" y="{mid}" class="ytitle" transform="rotate(-90 12 {mid})">{escape(y_title)}</text>'
        )
        return out


def _svg(body: list[str], label: str, width: int, height: int) -> str:
    head = (
        f'<svg viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>'
    )
    return head + "".join(body) + "</svg>"


def stacked_bars(
    label: str,
    buckets: Sequence[str],
    series: Mapping[str, Sequence[float]],
    colour: Mapping[str, str],
    fmt: Format,
    y_title: str,
    integer: bool = False,
) -> str:
    """Per bucket, one bar stacking every model's value (in `series` order); `integer`: counts."""
    totals = [sum(s[i] for s in series.values()) for i in range(len(buckets))]
    frame = Frame(len(buckets), nice_ticks(max(totals, default=0.0), integer=integer))
    body = frame.axes(buckets, fmt, y_title)
    gap = (frame.x(1) - frame.x(0)) * 0.15
    for i in range(len(buckets)):
        below = 0.0
        for model, values in series.items():
            v = values[i]
            if v <= 0:
                continue
            top, bottom = frame.y(below + v), frame.y(below)
            bar_w = frame.x(1) - frame.x(0) - 2 * gap
            body.append(
                f'<rect x="{_f(frame.x(i) + gap)}" y="{_f(top)}" width="{_f(bar_w)}" '
                f'height="{_f(bottom - top)}" fill="{colour[model]}"><title>{escape(model)} '
                f"{escape(buckets[i])}: {escape(fmt(v))}</title></rect>"
            )
            below += v
    return _svg(body, label, frame.width, frame.height)


def lines(
    label: str,
    buckets: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    colour: Mapping[str, str],
    fmt: Format,
    y_title: str,
    top: float = 1.0,
) -> str:
    """One line with points per model over the buckets, broken where a bucket has no value."""
    frame = Frame(len(buckets), nice_ticks(top))
    body = frame.axes(buckets, fmt, y_title)
    for model, values in series.items():
        runs: list[list[str]] = [[]]
        for i, v in enumerate(values):
            if v is None:
                runs.append([])
                continue
            x, y = _f(frame.x(i + 0.5)), _f(frame.y(v))
            runs[-1].append(f"{x},{y}")
            body.append(
                f'<circle cx="{x}" cy="{y}" r="3" fill="{colour[model]}"><title>{escape(model)} '
                f"{escape(buckets[i])}: {escape(fmt(v))}</title></circle>"
            )
        for run in runs:
            if len(run) > 1:
                body.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="{colour[model]}"/>')
    return _svg(body, label, frame.width, frame.height)


@dataclass(frozen=True)
class Row:
    """One policy's estimate with its interval (None: no estimate, `note` says why)."""

    name: str
    value: float | None
    low: float | None
    high: float | None
    colour: str
    note: str = ""


def intervals(label: str, rows: Sequence[Row], fmt: Format, x_title: str, width: int = 440) -> str:
    """A dot per policy at its estimate, a whisker over its interval; one line per policy."""
    name_w, line_h = 170, 22
    height = TOP + line_h * len(rows) + BOTTOM
    highs = [r.high for r in rows if r.high is not None and math.isfinite(r.high)]
    ticks = nice_ticks(max(highs, default=1.0))

    def x(v: float) -> float:
        return name_w + (width - name_w - RIGHT - 10) * v / ticks[-1]

    body = []
    for t in ticks:
        body.append(f'<line x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{TOP}" y2="{height - BOTTOM}" class="grid"/>')
        body.append(f'<text x="{_f(x(t))}" y="{height - BOTTOM + 14}" class="xtick">{escape(fmt(t))}</text>')
    body.append(f'<text x="{_f(x(ticks[-1] / 2))}" y="{height - 2}" class="xtick">{escape(x_title)}</text>')
    for i, r in enumerate(rows):
        y = TOP + line_h * i + line_h / 2
        name = r.name if len(r.name) <= 26 else r.name[:25] + "…"
        body.append(f'<text x="{name_w - 8}" y="{_f(y)}" class="ylabel">{escape(name)}</text>')
        if r.value is None or r.low is None or r.high is None:
            body.append(f'<text x="{name_w + 4}" y="{_f(y)}" class="note">{escape(r.note)}</text>')
            continue
        tip = f"{r.name}: {fmt(r.value)} [{fmt(r.low)}, {fmt(r.high)}]"
        body.append(
            f'<g><title>{escape(tip)}</title><line x1="{_f(x(r.low))}" x2="{_f(x(r.high))}" y1="{_f(y)}" '
            f'y2="{_f(y)}" stroke="{r.colour}" class="whisker"/><circle cx="{_f(x(r.value))}" cy="{_f(y)}" '
            f'r="4.5" fill="{r.colour}"/></g>'
        )
    return _svg(body, label, width, height)


def swatch(colour: str) -> str:
    """A small square of `colour` (a legend's key)."""
    return (
        f'<svg width="12" height="12" viewBox="0 0 12 12" '
        f'aria-hidden="true"><rect width="12" height="12" rx="2" fill="{colour}"/></svg>'
    )
