"""What identifies a conversation (its task) and what the router reads of it."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from router_train.serve.config import FeedbackConfig

TASK_ID_HEADER = "x-router-task-id"
"""Request header naming the task explicitly; it replaces the first user message as the identity."""
REPO_HEADER = "x-router-repo"
"""Request header with the task's repository (`owner/name`), passed to the router."""

# mini-SWE-agent 2.4's instance templates put the issue ({{task}}) inside fixed boilerplate; the router
# was trained on bare issues, so it reads only the part inside. SWE-bench configs (swebench.yaml,
# swebench_backticks.yaml, swebench_xml.yaml) wrap it in <pr_description>; default.yaml / mini.yaml open
# with "Please solve this issue:".
_TEMPLATES = (
    re.compile(r"<pr_description>\s*Consider the following PR description:\n(.*?)\n</pr_description>", re.S),
    re.compile(r"\APlease solve this issue: (.*?)\n\nYou can execute bash commands and edit files", re.S),
)


class RequestError(ValueError):
    """A request the proxy cannot serve as sent (answered 400 with this message)."""


def message_text(content: Any) -> str:
    """A chat message's text: a string, or the text parts of a list of content parts, joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        )
    return ""


def first_user_message(messages: list[Any]) -> str:
    """The text of the first message with role `user`: the task of an agent's conversation."""
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            text = message_text(m.get("content"))
            if text.strip():
                return text
            raise RequestError("the first user message has no text")
    raise RequestError("`messages` has no user message, so the request names no task")


def issue_text(first_user: str) -> str:
    """The issue inside a known agent template (mini-SWE-agent's), else the whole message."""
    for pattern in _TEMPLATES:
        match = pattern.search(first_user)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return first_user


def task_key(first_user: str, task_id: str | None) -> str:
    """The conversation's identity: sha256 hex of its first user message, bound to the explicit task id
    when one is sent. Bound, not replaced: a client (the chat routes take no token) that sends another
    task's id with its own conversation gets a task of its own, never the other's route (issue 44, item 9;
    docs/security.md). Never raises: a lone surrogate is hashed as sent (`surrogatepass`)."""
    source = f"task-id:{task_id}\nfirst-user:{first_user}" if task_id else f"first-user:{first_user}"
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def kept_text(text: str, feedback: FeedbackConfig | None) -> tuple[str | None, str]:
    """What a decision record keeps of the text routed on (`DecisionRecord.issue_text`, `issue_sha256`):
    always its sha256; the text itself with `[feedback] task_text = "keep"` (the default) when it is at
    most `max_task_text_bytes`. Without `[feedback]` (no outcomes, nothing to refit) only the hash."""
    data = text.encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(data).hexdigest()
    keep = feedback is not None and feedback.task_text == "keep" and len(data) <= feedback.max_task_text_bytes
    return (text if keep else None), digest
