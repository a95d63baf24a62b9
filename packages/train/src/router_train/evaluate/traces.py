"""Routing decisions from a `vf-eval` run's `traces.jsonl` (verifiers 0.4.0).

Each line is one episode (`verifiers.v1.episode.Episode` dumped as JSON): `task.data` holds the task
row (our env's fields included), `traces` the agents' traces, each with its message graph `nodes`
(`{message: {role, content}, sampled}`), `root_reply`, `rewards` ({name: {score, weight}}) and
`metrics`. The decision is the env's `parse_route` applied to the trace's final reply: the last
model-sampled assistant message (what `Trace.last_reply` returns), so a router that thinks aloud and
answers last is read as it would be in training. Several episodes per task (`-r N`) are several
decisions. Plain JSON is read, so verifiers need not be importable here.

Agentic traces (the env's `repo_access` mode) read the same way: the final reply, after the tool calls,
is the route (an episode that ran out of turns ends on a tool call and routes nowhere). Every trace's
turns (sampled assistant messages) and tool calls are counted from its nodes and averaged into the
`recorded` means as `trace/turns` and `trace/tool_calls`, next to the rewards and metrics it recorded.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from router_frontier_rl.route_parser import parse_route
from router_train.scoring.decisions import Decisions, EvaluateError, from_labels

_ID_FIELDS = ("instance_id", "id", "name")
"""Task-row fields that may hold the SWE-bench instance id, tried in this order."""


def traces_name(path: Path) -> str:
    """The row name of a traces file given none: its run directory (vf-eval writes `RUN/traces.jsonl`)."""
    return path.parent.name or path.stem


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _replies(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The model-sampled assistant messages of a trace, in order (`Trace.assistant_messages`)."""
    nodes = trace.get("nodes")
    messages: list[tuple[dict[str, Any], bool]] = []
    if isinstance(nodes, list):
        messages = [
            (n["message"], bool(n.get("sampled", False)))
            for n in nodes
            if isinstance(n, dict) and isinstance(n.get("message"), dict)
        ]
    elif isinstance(trace.get("messages"), list):  # a flattened export: every assistant turn counts
        messages = [(m, True) for m in trace["messages"] if isinstance(m, dict)]
    return [m for m, sampled in messages if m.get("role") == "assistant" and sampled]


def last_reply(trace: dict[str, Any]) -> str | None:
    """The trace's final reply, as `verifiers.v1.trace.Trace.last_reply` defines it; None if it has none."""
    if isinstance(trace.get("root_reply"), str):
        return str(trace["root_reply"]).strip()
    replies = _replies(trace)
    if not replies:
        return None
    return _text(replies[-1].get("content")).strip()


def episode_counts(trace: dict[str, Any]) -> dict[str, float]:
    """`trace/turns` (sampled assistant messages) and `trace/tool_calls` (the tool calls they made)."""
    replies = _replies(trace)
    calls = sum(len(m["tool_calls"]) for m in replies if isinstance(m.get("tool_calls"), list))
    return {"trace/turns": float(len(replies)), "trace/tool_calls": float(calls)}


def _task_id(data: Any, key: Any, known: Collection[str]) -> str | None:
    candidates = [data.get(f) for f in _ID_FIELDS] if isinstance(data, dict) else []
    candidates.append(key)
    for c in candidates:
        if isinstance(c, str) and c in known:
            return c
    return None


def _served_split(data: Any) -> set[str]:
    """The env split a task was served from, as `RouteData` records it; an upsampled copy (`repeat` > 0)
    exists only in the train split. Empty when the row says neither (traces of an older env)."""
    if not isinstance(data, dict):
        return set()
    out = {data["split"]} if isinstance(data.get("split"), str) else set()
    if isinstance(data.get("repeat"), int) and data["repeat"] > 0:
        out.add("train")
    return out


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def trace_problem(trace: dict[str, Any]) -> str | None:
    """What makes `trace` not a verifiers trace this reader can score (a field of the wrong type), or
    None. A malformed record is refused, never counted as an unparseable decision."""
    nodes = trace.get("nodes")
    if nodes is not None and not isinstance(nodes, list):
        return f"`nodes` is {_kind(nodes)}, not a list"
    for i, node in enumerate(nodes or []):
        if not isinstance(node, dict) or not isinstance(node.get("message"), dict):
            return f"node {i} has no `message` object"
        message = node["message"]
        if not isinstance(message.get("role"), str):
            return f"node {i}: `role` is {_kind(message.get('role'))}, not a string"
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            return f"node {i}: `content` is {_kind(content)}, not text or a list of parts"
        if "sampled" in node and not isinstance(node["sampled"], bool):
            return f"node {i}: `sampled` is {_kind(node['sampled'])}, not true/false"
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            return f"node {i}: `tool_calls` is {_kind(calls)}, not a list"
    reply = trace.get("root_reply")
    if reply is not None and not isinstance(reply, str):
        return f"`root_reply` is {_kind(reply)}, not a string"
    for field in ("rewards", "metrics"):
        value = trace.get(field)
        if value is not None and not isinstance(value, dict):
            return f"`{field}` is {_kind(value)}, not an object"
    for name, reward in (trace.get("rewards") or {}).items():
        score = reward.get("score") if isinstance(reward, dict) else None
        if not isinstance(score, int | float) or isinstance(score, bool):
            return f"reward {name!r} has no numeric `score`"
    return None


def _pool_of(data: Any) -> list[str] | None:
    """The pool a task was served with (`RouteData.valid_ids`), or None when the row does not say."""
    ids = data.get("valid_ids") if isinstance(data, dict) else None
    if ids is None:
        return None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"`valid_ids` is {_kind(ids)}, not a list of model ids")
    return ids


def _check_pool(data: Any, valid_ids: Sequence[str], where: str) -> None:
    """Refuse a task row served with another pool than the evaluated table's (or a malformed one)."""
    try:
        served = _pool_of(data)
    except ValueError as exc:
        raise EvaluateError(f"{where}: malformed task row: {exc}") from None
    if served is not None and sorted(served) != sorted(valid_ids):
        raise EvaluateError(
            f"{where}: recorded on another pool ({', '.join(served)}) than the evaluated table's "
            f"({', '.join(valid_ids)}): give the --table the traces were recorded with"
        )


def _scores(trace: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, reward in (trace.get("rewards") or {}).items():
        if isinstance(reward, dict) and isinstance(reward.get("score"), int | float):
            out[f"reward/{name}"] = float(reward["score"])
    for name, value in (trace.get("metrics") or {}).items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[f"metric/{name}"] = float(value)
    return out


def read_traces(
    path: str | Path, valid_ids: Sequence[str], known_tasks: Collection[str], *, name: str | None = None
) -> Decisions:
    """Decisions from a traces.jsonl; episodes of tasks not in `known_tasks` are skipped.

    An episode that failed before producing a trace counts as one unparseable decision for its task.
    Raises EvaluateError (naming the file and line) on unreadable files, lines that are not episodes,
    malformed traces (`trace_problem`) and tasks served with another pool than `valid_ids` (traces
    recorded on one pool cannot be scored against another pool's table).
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaluateError(f"{path}: cannot read traces file: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise EvaluateError(f"{path}: traces file is not UTF-8 text: {exc.reason}") from exc
    picks: dict[str, list[str | None]] = {}
    splits: set[str] = set()
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    seen_episode = False
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            episode = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvaluateError(f"{path}:{lineno}: not JSON: {exc.msg}") from exc
        if not isinstance(episode, dict) or not isinstance(episode.get("task"), dict):
            raise EvaluateError(f"{path}:{lineno}: not a verifiers episode (no `task` object)")
        seen_episode = True
        traces = episode.get("traces") or []
        if not isinstance(traces, list):
            raise EvaluateError(f"{path}:{lineno}: `traces` is not a list")
        task = episode["task"]
        where = f"{path}:{lineno}"
        _check_pool(task.get("data"), valid_ids, where)
        if not traces:
            tid = _task_id(task.get("data"), task.get("key"), known_tasks)
            if tid is not None:
                picks.setdefault(tid, []).append(None)
            continue
        for trace in traces:
            if not isinstance(trace, dict):
                raise EvaluateError(f"{path}:{lineno}: a trace is not an object")
            problem = trace_problem(trace)
            if problem is not None:
                raise EvaluateError(f"{where}: malformed trace: {problem}")
            ttask: dict[str, Any] = trace["task"] if isinstance(trace.get("task"), dict) else task
            _check_pool(ttask.get("data"), valid_ids, where)
            tid = _task_id(ttask.get("data"), ttask.get("key"), known_tasks)
            if tid is None:
                continue
            splits |= _served_split(ttask.get("data"))
            reply = last_reply(trace)
            picks.setdefault(tid, []).append(None if reply is None else parse_route(reply, valid_ids))
            for k, v in (_scores(trace) | episode_counts(trace)).items():
                sums[k] = sums.get(k, 0.0) + v
                counts[k] = counts.get(k, 0) + 1
    if not seen_episode:
        raise EvaluateError(f"{path}: no episodes in traces file")
    if not picks:
        raise EvaluateError(
            f"{path}: none of its episodes is a task of the evaluated split (wrong table or --split?)"
        )
    decisions = from_labels(name or traces_name(path), "traces", picks, source=path.name)
    recorded = {k: round(sums[k] / counts[k], 6) for k in sorted(sums)}
    return decisions.model_copy(update={"recorded": recorded, "served_splits": sorted(splits)})
