"""`RouterSpec = CheckpointSpec | EndpointSpec`: the flags and serve's `[router]` table parse into the one
mode they name, and each refusal is the one line it was when one model held both modes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from router_oracle.infra.validation_message import one_line
from router_train.route import CheckpointSpec, EndpointSpec, parse_router_spec
from router_train.route.spec import ROUTER_SPEC_FIELDS
from router_train.serve import read_config
from router_train.serve.config import ServeConfigError


def _error(fields: dict[str, object]) -> str:
    with pytest.raises(ValidationError) as exc:
        parse_router_spec(fields)
    return one_line(exc.value)


def test_the_spec_is_the_mode_it_names() -> None:
    spec = parse_router_spec({"checkpoint": Path("c.json"), "dial": 0.5, "fallback": "m", "model": None})
    assert spec == CheckpointSpec(checkpoint=Path("c.json"), dial=0.5, fallback="m")
    spec = parse_router_spec({"endpoint": "http://x/v1", "model": "m", "timeout_s": 5.0, "dial": None})
    assert spec == EndpointSpec(endpoint="http://x/v1", model="m", timeout_s=5.0)
    assert parse_router_spec({"checkpoint": Path("c.json")}).fallback is None
    # Every field of either mode is a `router-train route` flag, each once.
    assert sorted(ROUTER_SPEC_FIELDS) == sorted(
        set(CheckpointSpec.model_fields) | set(EndpointSpec.model_fields)
    )


def test_each_refusal_is_one_line_in_the_words_of_the_flags() -> None:
    one = "give exactly one of checkpoint (--checkpoint) and endpoint (--endpoint)"
    assert _error({}) == one
    assert _error({"checkpoint": "c.json", "endpoint": "http://x/v1", "model": "m"}) == one
    assert _error({"endpoint": "http://x/v1"}) == "endpoint needs model (--model: the served model name)"
    assert _error({"checkpoint": "c.json", "model": "m", "api_key_env": "K"}) == (
        "model, api_key_env: only with endpoint"
    )
    # An endpoint-only option given to a checkpoint is refused in the same words, not ignored.
    assert _error({"checkpoint": "c.json", "temperature": 0.5}) == "temperature: only with endpoint"
    assert _error({"checkpoint": "c.json", "budget": 0.3, "dial": 1.0}) == (
        "give at most one of budget (--budget), quality (--quality) and dial (--dial)"
    )
    assert _error({"endpoint": "http://x/v1", "model": "m", "dial": 1.0}).startswith(
        "dial (--dial): an endpoint (LLM) router gives no per-model log-probabilities"
    )
    # A field's own error names the field itself, not the mode it was validated as.
    assert _error({"checkpoint": "c.json", "dial": "x"}).startswith("dial: Input should be a valid number")


def test_serve_config_router_table_is_either_mode(tmp_path: Path) -> None:
    path = tmp_path / "serve.toml"
    up = '[upstreams.m]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    path.write_text(f'[router]\nendpoint = "http://127.0.0.1:9/v1"\nmodel = "r"\n{up}')
    assert read_config(path).router == EndpointSpec(endpoint="http://127.0.0.1:9/v1", model="r")
    path.write_text(f'[router]\ncheckpoint = "c.json"\ndial = "x"\n{up}')
    with pytest.raises(ServeConfigError, match=r"not a valid serve config: router\.dial: Input should be"):
        read_config(path)
    path.write_text(f'[router]\nfallback = "m"\n{up}')
    with pytest.raises(ServeConfigError, match=r"router: give exactly one of checkpoint \(--checkpoint\)"):
        read_config(path)
