"""The `router-train` / `router-oracle` command lines the docs show, found where a reader would copy them
from: fenced and indented code blocks of README.md and docs/*.md (test_train_docs_commands.py parses each
with the CLI's own parser).

In a block with `$ ` prompts only the prompted lines are commands (the rest is their output); in a block
without prompts every line that starts with a command is one. A line ending in `\\` continues on the next.
`# ...` comments, `VAR=value` prefixes, redirections and `&` are shell, not the command's; `&&`, `|` and
`;` separate commands. `./pants run packages/train:router-train -- ARGS` is `router-train ARGS` (and the
same for the oracle's). A usage synopsis (`[--port N]`, `a|b`) is not a command line and is left out.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
"""The repository root (this file is packages/train/tests/doc_commands.py)."""

PROGRAMS = ("router-train", "router-oracle")
"""The command-line tools whose lines are checked."""

PANTS_TARGETS = {
    "packages/train:router-train": "router-train",
    "packages/oracle:router-oracle": "router-oracle",
}
"""`./pants run TARGET -- ARGS` forms of the tools."""

_OPERATORS = {"&&", "||", "|", ";", "&"}
_REDIRECTS = {">", ">>", "<", ">&", "&>"}
_FENCE = re.compile(r"^\s*(```|~~~)")
_STARTS = re.compile(r"^(\$ )?([A-Z_][A-Z0-9_]*=\S*\s+)*(router-train|router-oracle|\./pants run packages/)")


@dataclass(frozen=True)
class DocCommand:
    """One command line of a doc."""

    doc: str
    """The doc's path from the repository root."""
    line: int
    """Its (first) line in the doc, from 1."""
    program: str
    """`router-train` or `router-oracle`."""
    argv: list[str]
    """The arguments after the program's name."""
    error: str = ""
    """Why the line is no shell command (unbalanced quotes); empty when it is one."""

    def where(self) -> str:
        return f"{self.doc}:{self.line}: {self.program} {shlex.join(self.argv)}"


def doc_files() -> list[Path]:
    """README.md and every docs/*.md, in name order."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _code_lines(text: str) -> list[list[tuple[int, str]]]:
    """The doc's code blocks, each its (line number, text) pairs: fenced blocks, and runs of lines
    indented 4 spaces or more after a blank line outside them."""
    blocks: list[list[tuple[int, str]]] = []
    fenced: list[tuple[int, str]] | None = None
    indented: list[tuple[int, str]] | None = None
    previous_blank = True
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            if fenced is None:
                fenced = []
            else:
                blocks.append(fenced)
                fenced = None
            indented = None
        elif fenced is not None:
            fenced.append((number, line))
        elif line.startswith("    ") and line.strip() and (previous_blank or indented is not None):
            if indented is None:
                indented = []
                blocks.append(indented)
            indented.append((number, line.strip()))
        elif line.strip():
            indented = None
        previous_blank = not line.strip()
    return blocks


def _joined(block: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The block's lines with `\\` continuations joined, each at its first line's number."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in block:
        pending = (pending[0], pending[1] + " " + line.strip()) if pending is not None else (number, line)
        if pending[1].rstrip().endswith("\\"):
            pending = (pending[0], pending[1].rstrip()[:-1])
        else:
            out.append(pending)
            pending = None
    if pending is not None:
        out.append(pending)
    return out


def _segments(command: str) -> list[list[str]]:
    """The shell words of each command of the line (`&&`, `|`, `;`, `&` separate; redirections and
    their targets dropped)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    segments: list[list[str]] = [[]]
    words = list(lexer)
    i = 0
    while i < len(words):
        word = words[i]
        if word in _OPERATORS:
            segments.append([])
        elif word in _REDIRECTS:
            if segments[-1] and segments[-1][-1] in ("1", "2"):  # `2>` / `1>`: the descriptor
                segments[-1].pop()
            i += 1  # the redirection's target
        else:
            segments[-1].append(word)
        i += 1
    return [s for s in segments if s]


def _as_program(words: list[str]) -> tuple[str, list[str]] | None:
    """`(program, argv)` when the words run one of `PROGRAMS` (after `VAR=value` prefixes)."""
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]
    if words and words[0] in PROGRAMS:
        return words[0], words[1:]
    if len(words) >= 3 and words[:2] == ["./pants", "run"] and words[2] in PANTS_TARGETS:
        rest = words[3:]
        return PANTS_TARGETS[words[2]], rest[1:] if rest[:1] == ["--"] else rest
    return None


def is_synopsis(argv: list[str]) -> bool:
    """A usage synopsis, not a command: optional parts in brackets or alternatives with `|`."""
    return any(w.startswith("[") or w.endswith("]") or "|" in w for w in argv)


def commands_in(path: Path) -> list[DocCommand]:
    """Every command line of one doc, in order."""
    doc = path.relative_to(REPO).as_posix()
    found: list[DocCommand] = []
    for block in _code_lines(path.read_text(encoding="utf-8")):
        lines = _joined(block)
        prompted = any(line.lstrip().startswith("$ ") for _, line in lines)
        for number, line in lines:
            text = line.strip()
            if prompted:
                if not text.startswith("$ "):
                    continue
                text = text[2:]
            elif not _STARTS.match(text):
                continue
            try:
                segments = _segments(text)
            except (
                ValueError
            ) as exc:  # shlex: unbalanced quotes (a multi-line `python -c '...'` is no concern)
                if any(p in text for p in PROGRAMS):
                    found.append(DocCommand(doc, number, text.split()[0], [], f"{exc}: {text}"))
                continue
            for words in segments:
                program = _as_program(words)
                if program is not None:
                    found.append(DocCommand(doc, number, program[0], program[1]))
    return found


def all_commands() -> list[DocCommand]:
    """Every command line of every doc."""
    return [c for path in doc_files() for c in commands_in(path)]
