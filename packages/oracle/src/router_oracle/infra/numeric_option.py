"""The one numeric-option validator: every number a CLI or the env takes is bounded and finite.

A bound is stated once, as pydantic constraints: on a config field (`Field(ge=1, le=MAX_STEPS)`) or
as one of the annotated types below. `option_type` turns such an annotation, and `field_option` a
config field, into an argparse `type=`, so a flag is checked by the same rule as the config it fills,
before any work, and argparse's error names the flag: `argument --lr: Input should be a finite number
(got 'inf')`. Both `router-oracle` and `router-train` build their numeric flags with it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from router_oracle.infra.validation_message import one_line

MAX_SEED = 2**32 - 1
"""Largest seed: 32 bits, what numpy's and most other generators take."""
MAX_COUNT = 1_000_000
"""Largest count of anything a command repeats or draws (steps, folds, bootstrap samples, pools)."""

Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
"""A seed: 0 to 2**32 - 1."""
Count = Annotated[int, Field(ge=1, le=MAX_COUNT)]
"""A positive count, at most MAX_COUNT."""
Share = Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]
"""A share strictly between 0 and 1 (a held-out fraction)."""
Finite = Annotated[float, Field(allow_inf_nan=False)]
"""Any finite float."""


def option_type(annotation: Any, what: str = "number") -> Callable[[str], Any]:
    """An argparse `type=` that validates the flag's text against `annotation` (a type with pydantic
    constraints); out of bounds, not finite or not a number, argparse reports `argument FLAG: ...`."""
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)

    def parse(text: str) -> Any:
        try:
            return adapter.validate_python(text)
        except ValidationError as exc:
            raise argparse.ArgumentTypeError(one_line(exc)) from None

    parse.__name__ = what  # argparse's fallback message says `invalid <name> value`
    return parse


def field_option(model: type[BaseModel], name: str) -> Callable[[str], Any]:
    """`option_type` of the config field `model.name`: its type and its bounds, nothing restated."""
    field = model.model_fields[name]
    annotation: Any = field.annotation
    if field.metadata:
        annotation = Annotated[(annotation, *field.metadata)]
    return option_type(annotation)


Seconds = Annotated[float, Field(gt=0, le=86_400, allow_inf_nan=False)]
"""A time limit: more than 0, at most a day."""
Retries = Annotated[int, Field(ge=0, le=100)]
"""A retry count: 0 to 100."""
Temperature = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]
"""A sampling temperature: 0 to 100."""
Port = Annotated[int, Field(ge=0, le=65_535)]
"""A TCP port: 0 (any free one) to 65535."""
