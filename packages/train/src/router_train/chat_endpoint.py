"""One OpenAI-compatible chat endpoint asked once per request: the client `route`'s endpoint router and
`analyze` share, and a request still failing after the client's retries as one `EndpointError` line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from router_oracle.infra.cli_runner import CommandError

if TYPE_CHECKING:
    import openai


class EndpointError(CommandError):
    """The endpoint failed (HTTP error, timeout, unreachable) after its bounded retries: one line, nothing
    written, exit 1 (`route.spec.EXIT_ENDPOINT_FAILED`)."""

    exit_code = 1


def chat_client(base_url: str, api_key: str, timeout_s: float, max_retries: int) -> openai.OpenAI:
    """The client: its own bounded retries (exponential backoff) on HTTP 408/409/429/5xx, timeouts and
    connection errors; an empty key is sent as "EMPTY" (local servers want some key)."""
    # Imported where a client is made: `route` and `serve` with a local checkpoint import this module
    # (through the endpoint router) and never need openai's 0.5 s import.
    import openai

    return openai.OpenAI(
        base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout_s, max_retries=max_retries
    )


def ask_once(
    client: openai.OpenAI,
    messages: list[dict[str, str]],
    *,
    model: str,
    temperature: float,
    max_tokens: int | None,
    where: str,
) -> str:
    """The reply's text to `messages` (empty when the server sent no content); a failure after the client's
    retries is an `EndpointError` whose one line starts with `where` (the endpoint and the task)."""
    import openai  # already imported by `chat_client`, which made `client`

    retries = client.max_retries
    try:
        completion = client.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            temperature=temperature,
            max_tokens=max_tokens if max_tokens is not None else openai.omit,
        )
    except openai.APITimeoutError as exc:
        timeout: Any = client.timeout
        raise EndpointError(f"{where}: timed out after {float(timeout):g}s ({retries} retries)") from exc
    except openai.APIStatusError as exc:
        raise EndpointError(
            f"{where}: HTTP {exc.status_code} after {retries} retries: {short(exc.message)}"
        ) from exc
    except openai.APIConnectionError as exc:
        raise EndpointError(f"{where}: cannot connect ({retries} retries): {short(str(exc))}") from exc
    if not completion.choices:
        return ""
    return completion.choices[0].message.content or ""


def short(text: str, limit: int = 200) -> str:
    """`text` on one line, cut to `limit` characters (an error body in a one-line message)."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
