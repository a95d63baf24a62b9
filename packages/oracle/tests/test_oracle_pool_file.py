"""Pool TOML files: valid ones load, bad ones fail naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from router_oracle.infra.errors import OracleInputError
from router_oracle.pool_file import load_pool

GOOD = """
name = "mine"
description = "two models"
[[models]]
id = "a-1"
name = "A"
runs = ["r1", "r2"]
price = 0.5
[[models]]
id = "b"
name = "B"
runs = ["r3"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pool.toml"
    path.write_text(text)
    return path


def test_pool_file_loads_with_optional_price(tmp_path: Path) -> None:
    pool = load_pool(write(tmp_path, GOOD))
    assert pool.name == "mine" and pool.ids == ["a-1", "b"]
    assert [m.price for m in pool.models] == [0.5, None]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\n', "empty pool"),
        ('name = "x"\nmodels = []\n', "empty pool"),
        ("name = ", "malformed TOML"),
        (GOOD.replace('id = "b"', 'id = "a-1"'), "duplicate model ids"),
        (GOOD.replace('runs = ["r3"]', 'runs = ["r1"]'), "a run is listed twice"),
        (GOOD.replace('id = "b"', 'id = "B model"'), "invalid pool"),
        (GOOD.replace('runs = ["r3"]', "runs = []"), "invalid pool"),
        (GOOD.replace("price = 0.5", "price = -1.0"), "invalid pool"),
        (GOOD.replace("price = 0.5", "price = inf"), r"(?s)invalid pool: .*price must be finite"),
        (GOOD.replace('name = "B"', 'name = "B"\ncolour = "red"'), "invalid pool"),
    ],
)
def test_bad_pool_files(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(OracleInputError, match=message) as exc:
        load_pool(path)
    assert str(path) in str(exc.value)


def test_missing_pool_file(tmp_path: Path) -> None:
    with pytest.raises(OracleInputError, match="cannot read pool file"):
        load_pool(tmp_path / "none.toml")
