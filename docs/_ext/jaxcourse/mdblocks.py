"""Find fenced blocks (directives and code) in a MyST lesson, with their line numbers.

Shared by the lesson checker and the starter-notebook writer; it reads text
only and imports nothing from Sphinx.
"""

from __future__ import annotations

import dataclasses
import re


@dataclasses.dataclass
class Block:
    """A fenced block: its directive name (or language), argument, options and body lines."""

    line: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence
    kind: str
    argument: str
    options: dict[str, str]
    body: list[tuple[int, str]]


FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})(?:\{(?P<directive>[\w-]+)\}|(?P<language>[\w+-]*))\s*(?P<argument>.*)$")


def blocks(lines: list[str]) -> list[Block]:
    """Every fenced block, outermost and nested, with 1-based line numbers."""
    found: list[Block] = []
    stack: list[tuple[str, Block]] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stack and stripped == stack[-1][0]:
            fence, block = stack.pop()
            block.end = number
            found.append(block)
            continue
        match = FENCE.match(stripped)
        if match and (not stack or stack[-1][1].kind not in ("python", "text", "code-cell", "")):
            kind = match["directive"] or match["language"] or ""
            stack.append((match["fence"], Block(number, number, kind, match["argument"].strip(), {}, [])))
            continue
        if stack:
            block = stack[-1][1]
            option = re.match(r"^:([\w-]+):\s*(.*)$", stripped)
            if option and not block.body and block.kind not in ("python", "text", ""):
                block.options[option[1]] = option[2]
            else:
                block.body.append((number, line))
    return sorted(found, key=lambda block: block.line)
