"""Every code cell a page's author wrote, found by its fence alone, and what swallowed one that never ran.

A markdown construct that runs on past a cell (an amsmath environment inside multi-line ``$...$``, a fence
never closed) hides it from myst-nb and ``lessonsource`` alike, so this module reads the page as lines.
Nothing here imports Sphinx.
"""

from __future__ import annotations

import dataclasses
import re

from .frontmatter import front_matter_end
from .lessonsource import block_parser

_FENCE = re.compile(r"^ {0,3}(?P<marks>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_CODE_CELL = re.compile(r"^\s*\{code-cell\}")


@dataclasses.dataclass(frozen=True)
class Fence:
    line: int  # 1-based, the opening line
    marks: str
    info: str
    closed: bool
    end: int  # 1-based, the closing line (the last line of the text if never closed)


def fences(lines: list[str], first: int = 0, stop: int | None = None) -> list[Fence]:
    """Fences opened outside any other fence, in 0-based lines [first, stop) (CommonMark's rules)."""
    found: list[Fence] = []
    index = first
    lines = lines[:stop]
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match or (match["marks"][0] == "`" and "`" in match["info"]):
            index += 1
            continue
        marks, opened = match["marks"], index
        close = re.compile(rf"^ {{0,3}}{re.escape(marks[0])}{{{len(marks)},}}\s*$")
        index += 1
        while index < len(lines) and not close.match(lines[index]):
            index += 1
        found.append(Fence(opened + 1, marks, match["info"].strip(), index < len(lines), min(index + 1, len(lines))))
        index += 1
    return found


def written_cells(text: str) -> list[int]:
    """1-based lines of the ``{code-cell}`` fences the author wrote as cells.

    Top-level ones, and ones inside a directive (``{note}``, closed or not) or inside any fence that is
    never closed: myst-nb runs neither, and the author meant them to run. A cell shown inside a code
    block (```` ```markdown ````) is an example, not a cell.
    """
    lines = text.splitlines()
    cells = []
    for fence in fences(lines, front_matter_end(lines)):
        if _CODE_CELL.match(fence.info) and not fence.marks.startswith("~"):
            cells.append(fence.line)  # a ':::' cell too: myst-nb does not run it, and says nothing
        elif not fence.closed or fence.info.startswith("{"):
            cells += [
                inner.line
                for inner in fences(lines, fence.line, fence.end - 1 if fence.closed else None)
                if inner.marks.startswith("`") and _CODE_CELL.match(inner.info)
            ]
    return cells


def swallower(text: str, line: int, extensions: set[str] | frozenset[str]) -> str:
    """What, in the page's markdown, covers the 1-based ``line`` where a cell was written."""
    lines = text.splitlines()
    for token in block_parser(frozenset(extensions)).parse(text + "\n"):
        if token.map is None or token.nesting == -1 or not token.map[0] + 1 < line <= token.map[1]:
            continue
        start = token.map[0] + 1
        first = lines[start - 1].strip() if start <= len(lines) else ""
        if token.type == "amsmath":
            return (
                f"the amsmath environment '{first}' that starts line {start} runs on past it; "
                "put that math inside $$ ... $$"
            )
        if token.type in ("math_block", "math_block_label"):
            return f"the display math opened at line {start} runs on past it; close it with $$ before the cell"
        if token.type in ("fence", "colon_fence"):
            closed = token.map[1] <= len(lines) and lines[token.map[1] - 1].strip().startswith(token.markup)
            if closed and token.map[1] - 1 > token.map[0]:
                return (
                    f"it is inside the block '{first}' opened at line {start}, and myst-nb runs only cells at the "
                    "top level of the page; move it out of the block"
                )
            return f"the block '{first}' opened at line {start} is never closed and holds it; close it before the cell"
        if token.type == "html_block":
            return f"the HTML block at line {start} holds it"
        if token.type == "code_block":
            return f"it is read as indented code from line {start}; a cell's fence starts at the line's beginning"
        if token.type in ("paragraph_open", "heading_open", "blockquote_open", "bullet_list_open"):
            return f"the {token.type.removesuffix('_open').replace('_', ' ')} at line {start} holds it"
    return "the page's markup before it hides it"


def lost_cells(text: str, run_lines: set[int], extensions: set[str] | frozenset[str]) -> list[tuple[int, str]]:
    """(line, message) for each cell the author wrote that myst-nb does not run (``run_lines``: its cells)."""
    lines = text.splitlines()
    lost = []
    for line in written_cells(text):
        if line in run_lines:
            continue
        if lines[line - 1].lstrip().startswith(":"):
            why = "myst-nb runs only cells fenced with backticks (```{code-cell}), not ':::' blocks"
        else:
            why = swallower(text, line, extensions)
        lost.append((line, f"this code cell is never executed or shown: {why}"))
    return lost
