"""`router-oracle` on bad input: one line naming the user's file, exit 2 (130 on Ctrl-C), nothing written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, ValidationError

import router_oracle.cli as cli
from router_oracle.cli import main
from router_oracle.infra.validation_message import one_line


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in lines[0] and ".tmp" not in lines[0] and "pydantic.dev" not in lines[0]
    return lines[0]


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_non_utf8_pool_file_is_one_line(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (in_tmp / "g.toml").write_bytes(b'name = "\xff"\n')
    assert main(["build", "--pool", "g.toml", "-o", "t.json"]) == 2
    assert (
        _one_line_error(capsys)
        == "router-oracle: error: g.toml: not a UTF-8 pool file (byte 8: invalid start byte)"
    )
    assert not (in_tmp / "t.json").exists()


def test_an_invalid_pool_file_is_one_line_without_pydantic_noise(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_tmp / "p.toml").write_text('name = "p"\n[[models]]\nid = "Bad Id"\nname = "B"\nruns = []\n')
    assert main(["build", "--pool", "p.toml", "-o", "t.json"]) == 2
    line = _one_line_error(capsys)
    assert line.startswith("router-oracle: error: p.toml: invalid pool: models[0].id: String should match")
    assert "models[0].runs: List should have at least 1 item" in line


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("adir", "adir: is a directory; give a file name"),
        ("", "empty output path: give a file name"),
        ("afile/t.json", "afile/t.json: cannot write here: afile is not a directory"),
    ],
)
def test_output_path_problems_name_the_users_path(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], output: str, message: str
) -> None:
    (in_tmp / "adir").mkdir()
    (in_tmp / "afile").write_text("a file")
    assert main(["build", "-o", output]) == 2
    assert _one_line_error(capsys) == f"router-oracle: error: {message}"
    assert _leftovers(in_tmp) == [] and _leftovers(in_tmp / "adir") == []


def unwritable_directory(tmp_path: Path) -> Path:
    """A directory this process cannot create files in: a read-only one, or (as root, who may write
    anywhere) /sys, whose top level no one can add files to."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if not os.access(ro, os.W_OK):
        return ro
    sys_dir = Path("/sys")
    try:
        (sys_dir / ".router-probe").touch()
    except OSError:
        return sys_dir
    pytest.skip("no unwritable directory available")


def test_an_unwritable_directory_is_named(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = unwritable_directory(in_tmp) / "t.json"
    assert main(["build", "-o", str(target)]) == 2
    line = _one_line_error(capsys)
    assert line.startswith(f"router-oracle: error: {target}: cannot write in {target.parent}: ")


def test_ctrl_c_is_one_line_and_exit_130(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_table", interrupted)
    assert main(["build", "-o", "t.json"]) == 130
    assert _one_line_error(capsys) == "router-oracle: interrupted; no output written"
    assert not (in_tmp / "t.json").exists()


class _Sample(BaseModel):
    rate: float = Field(gt=0, lt=1)
    """A rate."""
    ids: list[int]
    """Some ids."""


def test_one_line_rendering_of_validation_errors() -> None:
    with pytest.raises(ValidationError) as exc:
        _Sample.model_validate({"rate": 2, "ids": [1, "x", "y", "z"]})
    assert one_line(exc.value) == (
        "rate: Input should be less than 1 (got 2); ids[1]: Input should be a valid integer, unable to "
        "parse string as an integer (got 'x'); ids[2]: Input should be a valid integer, unable to parse "
        "string as an integer (got 'y'); and 1 more error"
    )
    with pytest.raises(ValidationError) as exc:
        _Sample.model_validate_json("{")
    assert "\n" not in one_line(exc.value) and one_line(exc.value).startswith("Invalid JSON: EOF")


def _damaged_gzip(path: Path) -> Path:
    """A .gz whose header is fine but whose deflate stream is damaged (zlib.error when read)."""
    import gzip

    data = bytearray(gzip.compress(b'{"instance_id": "a__b-1", "problem_statement": "x"}\n' * 200))
    for i in range(20, 40):  # inside the deflate stream, past the 10-byte header
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("flag", ["--tasks", "--leaderboard", "--long-table"])
def test_a_damaged_gzip_input_is_one_line(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    name = "runs.jsonl.gz" if flag == "--long-table" else "in.json.gz"
    bad = _damaged_gzip(in_tmp / name)
    assert main(["build", flag, name, "-o", "t.json"]) == 2
    line = _one_line_error(capsys)
    assert line.startswith(f"router-oracle: error: {bad.name}: cannot read: "), line
    assert not (in_tmp / "t.json").exists()


def _special(in_tmp: Path, kind: str) -> Path:
    import socket
    import stat

    path = in_tmp / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "chr":
        try:  # a node for /dev/null's device, made here: replacing it (the old bug) would harm nothing
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except OSError:
            pytest.skip("cannot make a device node here (needs root)")
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    return path


@pytest.mark.parametrize(
    ("kind", "what"), [("fifo", "a FIFO"), ("sock", "a socket"), ("chr", "a character device")]
)
def test_a_special_output_path_is_refused_and_left_alone(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], kind: str, what: str
) -> None:
    import stat

    special = _special(in_tmp, kind)
    before = special.lstat()
    assert main(["build", "-o", kind]) == 2
    assert (
        _one_line_error(capsys)
        == f"router-oracle: error: {kind}: is {what}, not a regular file; give a file name"
    )
    after = special.lstat()
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    # ...also behind a symlink, which names its target
    (in_tmp / "link").symlink_to(special)
    assert main(["build", "-o", "link"]) == 2
    assert f"link: is {what} (the target of the link, {special}), not a regular file" in _one_line_error(
        capsys
    )
    assert (in_tmp / "link").is_symlink() and _leftovers(in_tmp) == []


def test_a_symlink_output_is_written_through_at_its_target(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_tmp / "real").mkdir()
    (in_tmp / "real" / "t.json").write_text("old")
    (in_tmp / "t.json").symlink_to("real/t.json")
    (in_tmp / "dangling.json").symlink_to("real/new.json")
    for name in ("t.json", "dangling.json"):
        assert main(["build", "--from-candidates", "bundled", "--models", "o3,gpt-5-mini", "-o", name]) == 0
        assert (in_tmp / name).is_symlink()
    assert json.loads((in_tmp / "real" / "t.json").read_text())["tasks"]
    new = json.loads((in_tmp / "real" / "new.json").read_text())
    assert new["tasks"] == json.loads((in_tmp / "real" / "t.json").read_text())["tasks"]
    assert _leftovers(in_tmp / "real") == []


@pytest.mark.parametrize("flag", ["--tasks", "--long-table"])
def test_an_output_that_is_one_of_the_inputs_is_refused(
    in_tmp: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    from router_oracle.data_files import tasks_path

    given = in_tmp / "in.jsonl"
    given.write_bytes(tasks_path().read_bytes() if flag == "--tasks" else b"")
    before = given.read_bytes()
    (in_tmp / "alias.jsonl").symlink_to("in.jsonl")
    for output in ("in.jsonl", str(given), "alias.jsonl"):
        assert main(["build", flag, "in.jsonl", "-o", output]) == 2
        line = _one_line_error(capsys)
        want = f"{output}: is also an input ({flag} in.jsonl); write the output somewhere else"
        assert line == f"router-oracle: error: {want}"
    assert given.read_bytes() == before
    # candidates: the same check
    assert main(["candidates", "--tasks", "in.jsonl", "-o", "alias.jsonl"]) == 2
    assert "is also an input (--tasks in.jsonl)" in _one_line_error(capsys)


def test_the_bundled_inputs_are_inputs_too(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from router_oracle.candidates import bundled_candidates_path

    bundled = bundled_candidates_path()
    before = bundled.stat().st_mtime_ns
    assert (
        main(["build", "--from-candidates", "bundled", "--models", "o3,gpt-5-mini", "-o", str(bundled)]) == 2
    )
    assert "is also an input (--from-candidates" in _one_line_error(capsys)
    assert bundled.stat().st_mtime_ns == before
