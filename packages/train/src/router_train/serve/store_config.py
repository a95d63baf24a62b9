"""`[store]` of serve's config: where the store lives and how long one call on it may take. `store` may
also be a plain string (the location alone: `store = "serve-state/decisions.sqlite"`)."""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, model_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_train.serve.store_url import StoreLocation

DEFAULT_LOCATION = "serve-state/decisions.sqlite"
"""The store when the config names none: an embedded SQLite file."""
DEFAULT_TIMEOUT_S = 2.0
"""`[store] timeout`'s default, seconds."""


class StoreConfig(FrozenModel):
    """`[store]`: the store's location and bound (or `store = "..."`, the location alone)."""

    location: StoreLocation = Field(default_factory=lambda: StoreLocation.parse(DEFAULT_LOCATION))
    """A SQLite file (the embedded default; created if missing, relative paths from the working directory)
    or a PostgreSQL URL `postgresql://user@host:port/db` that several replicas share (schema created at
    start; a password is better given in PGPASSWORD than in the file). The scheme's case does not matter."""
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, allow_inf_nan=False)
    """Seconds one store call may take: connecting, a statement, a database that stops answering (past
    it the call fails, the store is marked unavailable and reconnects by itself)."""

    @model_validator(mode="before")
    @classmethod
    def _location_alone(cls, data: Any) -> Any:
        if isinstance(data, str | os.PathLike):
            return {"location": data}
        return data

    @classmethod
    def of(cls, store: StoreConfig | StoreLocation | str | os.PathLike[str]) -> StoreConfig:
        """`store` as a `StoreConfig` (a location alone gets the default timeout)."""
        if isinstance(store, StoreConfig):
            return store
        if isinstance(store, StoreLocation):
            return cls(location=store)
        return cls(location=StoreLocation.parse(store))
