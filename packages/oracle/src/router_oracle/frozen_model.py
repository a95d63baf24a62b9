"""The one pydantic base of the project's file formats and reports: strict (unknown keys are refused)
and frozen (a value read or built is never changed in place)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """A strict, immutable pydantic model: `extra="forbid"`, `frozen=True`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
