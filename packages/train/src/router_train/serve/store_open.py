"""Open the store a `store` setting names: a PostgreSQL URL or a SQLite file (`store_url`), one
implementation over both (`store_sql`)."""

from __future__ import annotations

import os

from router_train.serve.store_api import Store
from router_train.serve.store_config import StoreConfig
from router_train.serve.store_sql import SqlStore
from router_train.serve.store_url import StoreLocation


def open_store(store: StoreConfig | StoreLocation | str | os.PathLike[str]) -> Store:
    """The store `store` names (schema created, checked or migrated now; one line naming the location,
    password masked, when it cannot be used), every call bounded by its timeout."""
    config = StoreConfig.of(store)
    return SqlStore(config.location, config.timeout)
