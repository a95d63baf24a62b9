"""Metering: each successful answer of a routed task counted (tokens, USD at the upstream's prices) for the
task it was routed as and the model that answered — both from the routing, not from response headers."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from starlette.responses import Response, StreamingResponse

from router_train.serve.config import ServeConfig
from router_train.serve.http_body import now
from router_train.serve.metrics import ServeMetrics
from router_train.serve.records import UsageRecord
from router_train.serve.store import DecisionLog
from router_train.serve.usage import StreamMeter, Tokens, body_usage
from router_train.serve.usage_batch import UsageBatcher


class Meter:
    """Records answers' usage: in the batcher (the store, within its window), the log and the metrics."""

    def __init__(
        self, config: ServeConfig, batcher: UsageBatcher, log: DecisionLog, metrics: ServeMetrics
    ) -> None:
        self.config = config
        self.batcher = batcher
        self.log = log
        self.metrics = metrics

    def metered(self, response: Response, task: str, model: str) -> Response:
        """`response` of `task` answered by `model`, its usage recorded: at once for a JSON body, at the end
        of the stream for server-sent events (whatever its last chunk reported). Errors are not metered."""
        if response.status_code >= 400:
            return response
        if isinstance(response, StreamingResponse):
            response.body_iterator = self._meter_stream(response.body_iterator, task, model)
        else:
            self.record(task, model, body_usage(bytes(response.body)))
        return response

    async def _meter_stream(self, chunks: AsyncIterable[Any], task: str, model: str) -> AsyncIterator[Any]:
        meter = StreamMeter()
        try:
            async for chunk in chunks:
                meter.feed(chunk if isinstance(chunk, bytes) else str(chunk).encode())
                yield chunk
            meter.close()
        finally:
            self.record(task, model, meter.tokens)
            close = getattr(chunks, "aclose", None)  # an async generator (the relay): end it here
            if close is not None:
                await close()

    def record(self, task: str, model: str, tokens: Tokens | None) -> None:
        """One answer's usage (None: it reported none)."""
        up = self.config.upstreams[model]
        cost = up.price(tokens.prompt, tokens.completion) if tokens else None
        record = UsageRecord(
            time=now(),
            task=task,
            model=model,
            prompt_tokens=tokens.prompt if tokens else None,
            completion_tokens=tokens.completion if tokens else None,
            cost=cost,
        )
        self.batcher.add(record)
        self.log.write(record)
        if tokens is not None:
            self.metrics.tokens.labels(model, "prompt").inc(tokens.prompt)
            self.metrics.tokens.labels(model, "completion").inc(tokens.completion)
        if cost is not None and cost >= 0 and cost != float("inf"):
            self.metrics.spend.labels(model).inc(cost)
