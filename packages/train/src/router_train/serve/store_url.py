"""Where a store lives, parsed in one place: a PostgreSQL URL or a SQLite file's path (`StoreLocation`).

The scheme is case-insensitive (`POSTGRESQL://` is PostgreSQL, never a file named after the URL), a URL is
never made a `Path` (which collapses `//`), and every message names a location through `shown()`, with the
password masked wherever it sits: the URL's userinfo, a `password=` query parameter, and any echo of the
URL's password or of $PGPASSWORD in a database's error text (`scrub`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pydantic import model_validator

from router_oracle.infra.frozen_model import FrozenModel

SCHEME = "postgresql://"
"""The scheme a PostgreSQL location is written with once parsed (`postgres://` and any case of either
are read as it)."""
MASK = "***"
"""What a password is shown as."""
_SCHEME = re.compile(r"^postgres(?:ql)?:/*", re.IGNORECASE)


class StoreLocation(FrozenModel):
    """A serve store's location: exactly one of `url` (PostgreSQL) and `path` (SQLite) is set. Read from a
    plain string (`StoreLocation.parse`, also what validating a string gives)."""

    url: str | None = None
    """A PostgreSQL URL, its scheme written `postgresql://` (the rest as given); None for a SQLite file."""
    path: Path | None = None
    """A SQLite file (relative paths from the working directory); None for a URL."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if isinstance(data, str | os.PathLike):
            parsed = cls.parse(data)
            return {"url": parsed.url, "path": parsed.path}
        return data

    @model_validator(mode="after")
    def _one_of(self) -> StoreLocation:
        if (self.url is None) == (self.path is None):
            raise ValueError("a store is a SQLite file or a postgresql:// URL")
        return self

    @classmethod
    def parse(cls, text: str | os.PathLike[str]) -> StoreLocation:
        """The location `text` names: a URL when it starts with `postgresql:` or `postgres:` (any case; a
        URL that went through `Path`, `postgresql:/h/db`, gets its second slash back), else a path."""
        raw = os.fspath(text)
        if not raw:
            raise ValueError("an empty store location")
        found = _SCHEME.match(raw)
        if found is None:
            return cls.model_construct(url=None, path=Path(raw))
        slashes = found.group(0).count("/")
        rest = raw[found.end() :]
        # `postgresql:///db` (no host: the local socket) keeps its third slash.
        return cls.model_construct(url=SCHEME + ("/" * max(0, slashes - 2)) + rest, path=None)

    @property
    def is_postgres(self) -> bool:
        return self.url is not None

    def shown(self) -> str:
        """The location as every message names it: the path, or the URL with its password masked."""
        if self.url is None:
            return str(self.path)
        return masked(self.url)

    def __str__(self) -> str:
        return self.shown()

    def __repr__(self) -> str:  # a config printed whole (a log, a traceback) shows no password either
        return f"StoreLocation({self.shown()!r})"

    def secrets(self) -> list[str]:
        """The passwords a message about this location must not show: the URL's (userinfo, query; raw and
        percent-decoded) and $PGPASSWORD's."""
        found = [p for p in _passwords(self.url or "") for p in (p, unquote(p))]
        env = os.environ.get("PGPASSWORD")
        return sorted({s for s in [*found, env or ""] if s}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        """`text` (a database's error, a message) with every password of `secrets` masked."""
        for secret in self.secrets():
            text = text.replace(secret, MASK)
        return text


def _split(url: str) -> tuple[str, str, str, str]:
    """scheme, userinfo (without its `@`; empty when none), the rest before the query, the query."""
    scheme_end = url.find("://") + 3
    head, sep, query = url[scheme_end:].partition("?")
    at = head.rfind("@")
    userinfo, rest = (head[:at], head[at + 1 :]) if at >= 0 else ("", head)
    return url[:scheme_end], userinfo, rest, sep + query


def _passwords(url: str) -> list[str]:
    if not url:
        return []
    _, userinfo, _, query = _split(url)
    found = [userinfo.partition(":")[2]] if ":" in userinfo else []
    for param in query.lstrip("?").split("&"):
        key, _, value = param.partition("=")
        if key.lower() == "password":
            found.append(value)
    return [p for p in found if p]


def masked(url: str) -> str:
    """The URL with its password shown as `***`, in the userinfo and in a `password=` query parameter."""
    scheme, userinfo, rest, query = _split(url)
    if ":" in userinfo:
        userinfo = userinfo.partition(":")[0] + ":" + MASK
    params = []
    for param in query.lstrip("?").split("&") if query else []:
        key, eq, _ = param.partition("=")
        params.append(f"{key}={MASK}" if key.lower() == "password" and eq else param)
    shown_query = "?" + "&".join(params) if query else ""
    return scheme + (userinfo + "@" if userinfo or "@" in url.partition("?")[0] else "") + rest + shown_query
