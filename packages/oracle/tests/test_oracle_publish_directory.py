"""`atomic_file.publish_directory`: a command's files appear together or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import router_oracle.infra.atomic_file as atomic_file
from router_oracle.infra.atomic_file import OutputPathError, publish_directory, write_text_atomic

OWNED = ("a.json", "b.md", "c.png")


def _write(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (directory / name).write_text(text)


def _contents(directory: Path) -> dict[str, str]:
    """Name -> text of every file; a subdirectory shows as `<dir>`."""
    return {p.name: "<dir>" if p.is_dir() else p.read_text() for p in sorted(directory.iterdir())}


def _siblings(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.parent.iterdir() if p.name != directory.name)


@pytest.fixture(params=["exchange", "two renames"])
def swap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of swapping: renameat2(RENAME_EXCHANGE), and the fallback where it is missing."""
    if request.param == "two renames":
        monkeypatch.setattr(atomic_file, "_exchange", lambda a, b: False)
    elif atomic_file._renameat2() is None:
        pytest.skip("no renameat2 here (not Linux, or glibc older than 2.28)")
    return str(request.param)


def test_a_new_directory_appears_whole(tmp_path: Path, swap: str) -> None:
    out = tmp_path / "sub" / "out"
    with publish_directory(out, owned=OWNED) as staged:
        _write(staged, {"a.json": "1", "b.md": "2"})
        assert not out.exists()  # nothing is visible before the block ends
    assert _contents(out) == {"a.json": "1", "b.md": "2"}
    assert _siblings(out) == []


def test_a_run_replaces_the_previous_set_and_keeps_a_users_files(tmp_path: Path, swap: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    _write(out, {"a.json": "old", "b.md": "old", "c.png": "old plot", "notes.txt": "mine"})
    (out / "mine").mkdir()
    (out / "mine" / "x").write_text("also mine")
    with publish_directory(out, owned=OWNED) as staged:
        _write(staged, {"a.json": "new", "b.md": "new"})
        assert _contents(out)["a.json"] == "old"
    # the plot the new run did not write is gone with the old set; the user's files stay
    assert _contents(out) == {"a.json": "new", "b.md": "new", "mine": "<dir>", "notes.txt": "mine"}
    assert (out / "mine" / "x").read_text() == "also mine"
    assert _siblings(out) == []


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_run_leaves_the_previous_set_intact(
    tmp_path: Path, swap: str, interrupt: type[BaseException]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    _write(out, {"a.json": "old", "b.md": "old"})
    with pytest.raises(interrupt), publish_directory(out, owned=OWNED) as staged:
        _write(staged, {"a.json": "new"})
        raise interrupt
    assert _contents(out) == {"a.json": "old", "b.md": "old"}
    assert _siblings(out) == []  # no staging directory left behind


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("afile", "afile: exists and is not a directory"),
        ("afile/out", "afile/out: cannot write here: afile is not a directory"),
        ("", "empty output directory: give a directory name"),
        (".", ".: is the working directory or above it; give a subdirectory"),
    ],
)
def test_output_path_problems_name_the_path_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputPathError) as exc, publish_directory(given, owned=OWNED):
        pass
    assert str(exc.value) == message
    assert sorted(os.listdir(tmp_path)) == ["afile"]


def test_a_write_error_inside_the_block_names_the_users_path(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with (
        pytest.raises(OutputPathError, match=f"^{out}: cannot write: "),
        publish_directory(out, owned=OWNED) as staged,
    ):
        (staged / "a.json").mkdir()
        (staged / "a.json").write_text("x")  # IsADirectoryError about a file in the staging directory
    assert not out.exists() and _siblings(out) == []


def test_single_file_errors_name_the_users_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    for given, message in [("adir", "adir: is a directory; give a file name"), ("", "empty output path")]:
        with pytest.raises(OutputPathError, match=message):
            write_text_atomic(given, "x")
    assert sorted(os.listdir(tmp_path)) == ["adir"] and os.listdir(tmp_path / "adir") == []


def test_a_directory_fifo_or_device_where_a_file_goes_is_refused_before_and_left_alone(
    tmp_path: Path,
) -> None:
    """`output_file`'s rule holds for the files of an output directory too (issue 41): a user's directory
    at `D/a.json` is not deleted with its contents, a FIFO is not replaced by a regular file; the check is
    `check_output_directory`, made before any work, and `publish_directory` makes it again."""
    out = tmp_path / "out"
    (out / "a.json").mkdir(parents=True)
    (out / "a.json" / "mine.txt").write_text("keep me")
    os.mkfifo(out / "b.md")
    with pytest.raises(OutputPathError, match=r"out/a\.json: is a directory"):
        atomic_file.check_output_directory(out, OWNED)
    with (
        pytest.raises(OutputPathError, match=r"out/a\.json: is a directory"),
        publish_directory(out, owned=OWNED) as staged,
    ):
        _write(staged, {"a.json": "new", "b.md": "new"})
    assert (out / "a.json" / "mine.txt").read_text() == "keep me"
    (out / "a.json" / "mine.txt").unlink()
    (out / "a.json").rmdir()
    with pytest.raises(OutputPathError, match=r"out/b\.md: is a FIFO"):
        atomic_file.check_output_directory(out, OWNED)
    assert (out / "b.md").is_fifo()
    (out / "c.png").symlink_to("/dev/null")
    os.unlink(out / "b.md")
    with pytest.raises(OutputPathError, match=r"out/c\.png: is a character device \(the target of the link"):
        atomic_file.check_output_directory(out, OWNED)


def test_a_link_among_the_files_is_written_through_and_stays_a_link(tmp_path: Path, swap: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "kept" / "a.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text("old")
    (out / "a.json").symlink_to(elsewhere)
    with publish_directory(out, owned=OWNED) as staged:
        _write(staged, {"a.json": "new", "b.md": "new"})
    assert (out / "a.json").is_symlink() and os.readlink(out / "a.json") == str(elsewhere)
    assert elsewhere.read_text() == "new" and (out / "b.md").read_text() == "new"


def test_check_output_directory_refuses_an_input_among_the_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.json").write_text("{}")
    with pytest.raises(OutputPathError, match=r"is also an input \(--table"):
        atomic_file.check_output_directory(out, OWNED, [("--table", out / "a.json")])
    with pytest.raises(OutputPathError, match="exists and is not a directory"):
        atomic_file.check_output_directory(out / "a.json", OWNED)
