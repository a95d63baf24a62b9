"""serve's records over time: tasks decided, spend and resolve rate per model, per time bucket."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from router_train.serve.export import ServeRecords

BUCKET_WIDTHS_S = (1, 5, 15, 60, 300, 900, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400)
"""The widths a bucket may have, in seconds: the narrowest giving at most `MAX_BUCKETS` is used."""
MAX_BUCKETS = 24
"""Bars per chart at most: more would not be read at a glance."""


@dataclass(frozen=True)
class Timeline:
    """Per model, per bucket: tasks decided, USD spent and outcomes resolved of those reported."""

    starts: list[datetime]
    """Each bucket's start (UTC), oldest first."""
    width_s: int
    """The buckets' width, seconds."""
    tasks: dict[str, list[int]]
    """Model -> tasks decided to it per bucket (by decision time)."""
    spend: dict[str, list[float]]
    """Model -> summed cost (USD) of the priced outcomes reported per bucket (by outcome time)."""
    resolved: dict[str, list[float | None]]
    """Model -> resolved rate of its outcomes reported up to the end of each bucket (so far: the last one
    is the per-model table's); None before its first."""

    def labels(self) -> list[str]:
        """Each bucket's start as a short UTC label (seconds, minutes or days, as the width asks)."""
        if self.width_s < 60:
            form = "%H:%M:%S"
        elif self.width_s < 86400:
            days = {s.date() for s in self.starts}
            form = "%H:%M" if len(days) == 1 else "%m-%d %H:%M"
        else:
            form = "%Y-%m-%d"
        return [s.strftime(form) for s in self.starts]


def parse_time(text: str) -> datetime | None:
    """A record's `time` (ISO 8601, UTC) as an aware datetime; None when it is not one (a record written
    by something else than serve is left off the charts, not an error page)."""
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _stamp(text: str) -> float | None:
    t = parse_time(text)
    return None if t is None else t.timestamp()


def bucket_width(span_s: float) -> int:
    """The narrowest width of `BUCKET_WIDTHS_S` cutting `span_s` into at most `MAX_BUCKETS` buckets."""
    for width in BUCKET_WIDTHS_S:
        if span_s // width + 1 <= MAX_BUCKETS:
            return width
    return BUCKET_WIDTHS_S[-1]


def _so_far(counts: list[list[int]]) -> list[float | None]:
    """Per bucket, resolved / reported over it and every bucket before it (None while nothing is)."""
    out: list[float | None] = []
    resolved = reported = 0
    for r, k in counts:
        resolved, reported = resolved + r, reported + k
        out.append(resolved / reported if reported else None)
    return out


def timeline(records: ServeRecords, models: Sequence[str]) -> Timeline:
    """The records of `models` in time buckets (none when there is no decision)."""
    decided = [
        (t, d.model) for d in records.decisions.values() if d.model and (t := _stamp(d.time)) is not None
    ]
    reported = [(t, o) for o in records.outcomes.values() if (t := _stamp(o.time)) is not None]
    stamps = [t for t, _ in decided] + [t for t, _ in reported]
    if not stamps:
        return Timeline([], 1, {m: [] for m in models}, {m: [] for m in models}, {m: [] for m in models})
    first = min(stamps)
    width = bucket_width(max(stamps) - first)
    origin = first // width * width
    n = int((max(stamps) - origin) // width) + 1

    def at(t: float) -> int:
        return int((t - origin) // width)

    tasks = {m: [0] * n for m in models}
    spend = {m: [0.0] * n for m in models}
    counts: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0] for _ in range(n)])
    for t, model in decided:
        if model in tasks:
            tasks[model][at(t)] += 1
    for t, o in reported:
        if o.model in tasks:
            if o.cost is not None:
                spend[o.model][at(t)] += o.cost
            cell = counts[o.model][at(t)]
            cell[0] += int(o.resolved)
            cell[1] += 1
    resolved = {m: _so_far(counts[m]) for m in models}
    starts = [datetime.fromtimestamp(origin + i * width, UTC) for i in range(n)]
    return Timeline(starts, width, tasks, spend, resolved)
