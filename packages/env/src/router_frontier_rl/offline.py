"""Score replies without a model or a runtime: the trace a single-turn rollout leaves, rebuilt."""

from __future__ import annotations

import verifiers.v1 as vf

from router_frontier_rl.taskset import RouteTask


def reply_trace(task: RouteTask, reply: str) -> vf.Trace:
    """The unscored trace of `task` answered with `reply` (system, prompt turns, one sampled reply)."""
    prompt = task.data.prompt
    turns = [vf.UserMessage(content=prompt)] if isinstance(prompt, str) else list(prompt or [])
    msgs = [vf.SystemMessage(content=task.data.system_prompt or ""), *turns]
    nodes = [vf.MessageNode(parent=i - 1 if i else None, message=m) for i, m in enumerate(msgs)]
    nodes.append(
        vf.MessageNode(parent=len(msgs) - 1, message=vf.AssistantMessage(content=reply), sampled=True)
    )
    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        nodes=nodes,
    )


async def score_reply(task: RouteTask, reply: str) -> vf.Trace:
    """`reply_trace` scored by the task's own rewards, exactly as after a rollout."""
    trace = reply_trace(task, reply)
    await task.score(trace)
    return trace
