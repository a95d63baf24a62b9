"""Which backend a serve `store` location opens: a PostgreSQL URL or a SQLite file (`store_api`)."""

from __future__ import annotations

import os
from pathlib import Path

from router_train.serve.store import StickyStore
from router_train.serve.store_api import Store, store_url
from router_train.serve.store_postgres import PostgresStore


def open_store(location: str | os.PathLike[str]) -> Store:
    """The backend `location` names: a PostgreSQL URL (schema created or migrated now; one line naming the
    masked URL when it cannot connect) or a SQLite file (created if missing)."""
    url = store_url(location)
    if url is not None:
        return PostgresStore(url)
    return StickyStore(Path(location))
