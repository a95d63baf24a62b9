"""An LLM router behind an OpenAI-compatible chat API, asked exactly as the environment asks it.

The system prompt is the env's (`prompt.system_prompt` of the pool's capability summary on the env's
train split, `capabilities.summarize`), the user turn is the env's (`prompt.messages` of the task), and
the reply is parsed by the env's parser (`route_parser.parse_route`): what a policy trained on the env
saw in training, byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from router_frontier_rl.capabilities import CapabilitySummary
from router_frontier_rl.prompt import messages, system_prompt
from router_frontier_rl.route_parser import MAX_REPLY_CHARS, parse_route
from router_oracle.task_input import TaskInput
from router_train.chat_endpoint import ask_once, chat_client
from router_train.route.decision import Decision
from router_train.route.router import Router, progress_bar
from router_train.route.spec import EndpointSpec


class EndpointRouter(Router):
    """Asks `spec.model` at `spec.endpoint` once per task (temperature `spec.temperature`)."""

    def __init__(self, spec: EndpointSpec, summary: CapabilitySummary) -> None:
        self.spec = spec
        self.summary = summary
        self.pool = [m.id for m in summary.models]
        self.name = f"endpoint:{spec.model}"
        self.fallback = spec.fallback
        self.system = system_prompt(summary)
        key = os.environ.get(spec.api_key_env, "") if spec.api_key_env else ""
        # What is still failing after the client's bounded retries ends the route with one line.
        self.client = chat_client(spec.endpoint, key, spec.timeout_s, spec.max_retries)

    def request(self, task: TaskInput) -> list[dict[str, str]]:
        """The chat messages sent for `task`: the env's system prompt and user turn."""
        user = messages(task)
        assert isinstance(user, str)  # no few-shot examples: one user turn
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def ask(self, task: TaskInput) -> str:
        """The raw reply for `task` (empty when the server sent no content)."""
        where = f"{self.spec.endpoint}: routing {task.instance_id}"
        spec = self.spec
        return ask_once(
            self.client,
            self.request(task),
            model=spec.model,
            temperature=spec.temperature,
            max_tokens=spec.max_tokens,
            where=where,
        )

    def decide(self, task: TaskInput, explain: bool) -> Decision:
        reply = self.ask(task)
        model = parse_route(reply, self.pool)
        reason = None
        if model is None:
            if not reply:
                reason = "empty reply"
            elif len(reply) > MAX_REPLY_CHARS:
                reason = f"reply longer than the parser's limit ({len(reply)} > {MAX_REPLY_CHARS} characters)"
            else:
                reason = "unparseable reply (no single <route>VALID_ID</route>)"
        fallback = model is None and self.fallback is not None
        return Decision(
            instance_id=task.instance_id,
            model=self.fallback if fallback else model,
            reason=reason,
            router=self.name,
            reply=reply if explain else None,
            fallback=fallback,
        )

    def route_many(
        self, tasks: Sequence[TaskInput], *, explain: bool = True, progress: bool = False
    ) -> list[Decision]:
        bar = progress_bar(len(tasks), progress)
        with ThreadPoolExecutor(max_workers=self.spec.concurrency) as pool:
            futures = [pool.submit(self.decide, t, explain) for t in tasks]
            out = []
            try:
                for f in futures:
                    out.append(f.result())
                    if bar is not None:
                        bar.update(1)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
            finally:
                if bar is not None:
                    bar.close()
        return out
