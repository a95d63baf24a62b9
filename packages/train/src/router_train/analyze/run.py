"""Ask an OpenAI-compatible endpoint the rubric (`analyze.rubric`) for each task, a bounded number at a
time, and collect the strictly parsed answers with the count of what was missing."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import openai

from router_oracle.tasks_file import TaskRow
from router_train.analyze.rubric import RUBRIC, messages, parse_answer
from router_train.chat_endpoint import ask_once, chat_client
from router_train.route.router import progress_bar


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask."""

    base_url: str
    """The OpenAI-compatible API's base URL (e.g. http://127.0.0.1:8000/v1)."""
    model: str
    """The model name sent with each request."""
    api_key: str
    """The API key ("EMPTY" for a server that wants none)."""
    concurrency: int
    """Requests in flight at once."""
    max_retries: int
    """The client's retries of one request (exponential backoff) on 408/409/429/5xx, timeouts and
    connection errors."""
    timeout_s: float
    """Seconds one request may take."""
    temperature: float
    """Sampling temperature."""
    max_tokens: int | None
    """Cap on the reply's tokens (None: the server's default)."""


@dataclass
class Analysis:
    """Every task's 15 values (None: missing) and the counts of what was missing."""

    rows: dict[str, list[int | None]]
    """Per instance id, one value per rubric column (`task_features.ISSUE_COLUMNS` order)."""
    unparseable: int = 0
    """Replies that were not one JSON object (all 15 features of the task missing)."""
    missing: dict[str, int] = field(default_factory=dict)
    """Per column, the tasks whose value is missing (absent, not an integer, out of its scale, or in
    an unparseable reply)."""

    @property
    def complete(self) -> int:
        """Tasks with every value present."""
        return sum(all(v is not None for v in row) for row in self.rows.values())


def _ask(client: openai.OpenAI, endpoint: Endpoint, task: TaskRow) -> str:
    """The raw reply for `task` (empty when the server sent no content)."""
    where = f"{endpoint.base_url}: asking about {task.instance_id}"
    return ask_once(
        client,
        messages(task),
        model=endpoint.model,
        temperature=endpoint.temperature,
        max_tokens=endpoint.max_tokens,
        where=where,
    )


def analyze_tasks(tasks: Sequence[TaskRow], endpoint: Endpoint, *, progress: bool = False) -> Analysis:
    """Ask about every task, `endpoint.concurrency` at a time; a request still failing after the client's
    retries ends the pass (`EndpointError`), so nothing half-answered is written."""
    client = chat_client(endpoint.base_url, endpoint.api_key, endpoint.timeout_s, endpoint.max_retries)
    bar = progress_bar(len(tasks), progress)
    replies: list[str] = []
    stop = threading.Event()

    def ask(task: TaskRow) -> str:
        # After one failure no queued task is asked: the pass ends, its requests would be wasted.
        if stop.is_set():
            return ""
        try:
            return _ask(client, endpoint, task)
        except BaseException:
            stop.set()
            raise

    with ThreadPoolExecutor(max_workers=endpoint.concurrency) as pool:
        futures = [pool.submit(ask, t) for t in tasks]
        try:
            for f in futures:
                replies.append(f.result())
                if bar is not None:
                    bar.update(1)
        except BaseException:
            stop.set()
            for f in futures:
                f.cancel()
            raise
        finally:
            if bar is not None:
                bar.close()
    analysis = Analysis(rows={}, missing={item.name: 0 for item in RUBRIC})
    for task, reply in zip(tasks, replies, strict=True):
        values, parsed = parse_answer(reply)
        analysis.unparseable += not parsed
        for item, v in zip(RUBRIC, values, strict=True):
            analysis.missing[item.name] += v is None
        analysis.rows[task.instance_id] = list(values)
    return analysis
