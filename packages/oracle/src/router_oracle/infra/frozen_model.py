"""The one pydantic base of the project's file formats, configs and reports: strict (unknown keys are
refused) and frozen (a value read or built is never changed in place). The docstring under each field is
its `description`, so a CLI flag mirroring a config field takes its help from there
(`router_train.cli_args.field_flag`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """A strict, immutable pydantic model: `extra="forbid"`, `frozen=True`; field docstrings become
    field descriptions (`use_attribute_docstrings`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
