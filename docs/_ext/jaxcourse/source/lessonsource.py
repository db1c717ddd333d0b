"""A lesson file's block structure, from myst-parser's own tokens, so every reader agrees with the build.

Directive bodies (an exercise holding a hint) are parsed again, with their lines offset into the file.
Nothing here imports Sphinx.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re

import yaml
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from .frontmatter import front_matter_end

#: The MyST syntax extensions the site enables (conf.py's myst_enable_extensions).
MYST_EXTENSIONS = ("dollarmath", "colon_fence")
CODE_CELL = "code-cell"
#: Directives whose body is not MyST (code, math, other markup): nothing in it is a heading, label or role.
LITERAL_DIRECTIVES = frozenset(
    {CODE_CELL, "code-block", "code", "sourcecode", "math", "raw", "eval-rst", "literalinclude"}
)
DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<argument>.*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


@dataclasses.dataclass
class Fence:
    """A fenced block: a directive (``{name} argument``) or code in a language."""

    line: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence
    name: str  # directive name, or the code's language ('python'), or ''
    is_directive: bool
    argument: str
    options: dict[str, str]
    body: list[tuple[int, str]]  # (1-based line, text) after the options
    depth: int  # 0 at the top level of the file, 1 inside a directive, ...
    closed: bool = True  # False when the text ends before the closing fence
    markup: str = "```"  # the opening fence's characters

    @property
    def tags(self) -> list[str]:
        value = self.options.get("tags", "")
        if isinstance(value, list):
            return [str(tag) for tag in value]
        return [tag.strip() for tag in str(value).strip("[]").split(",") if tag.strip()]

    @property
    def backticks(self) -> bool:
        return self.markup.startswith("`")

    @property
    def code(self) -> str:
        return "\n".join(text for _, text in self.body)


@dataclasses.dataclass
class Heading:
    line: int
    level: int
    text: str
    depth: int


@dataclasses.dataclass
class Paragraph:
    line: int
    text: str
    depth: int


@dataclasses.dataclass
class LessonSource:
    lines: list[str]
    blocks: list  # every block in file order: Heading, Paragraph or Fence, nested ones after their parent
    front_matter_end: int  # 1-based line of the closing '---', 0 without front matter

    def fences(self, name: str | None = None, *, top_level: bool = False) -> list[Fence]:
        return [
            block
            for block in self.blocks
            if isinstance(block, Fence) and (name is None or block.name == name) and (not top_level or block.depth == 0)
        ]

    def code_cells(self) -> list[Fence]:
        """The cells myst-nb executes: top-level backtick ``{code-cell}`` fences, in order.

        myst-nb's reader takes only backtick fences as cells; a ``:::{code-cell}`` block is
        never executed (the checker reports it).
        """
        return [fence for fence in self.fences(CODE_CELL, top_level=True) if fence.is_directive and fence.backticks]

    def unexecuted_code_cells(self) -> list[Fence]:
        """``{code-cell}`` blocks myst-nb will not execute: colon fences, or nested in another block."""
        return [
            fence for fence in self.fences(CODE_CELL) if fence.is_directive and (fence.depth > 0 or not fence.backticks)
        ]

    def headings(self, *, top_level: bool = True) -> list[Heading]:
        return [b for b in self.blocks if isinstance(b, Heading) and (b.depth == 0 or not top_level)]


@functools.cache
def block_parser(extensions: frozenset[str] = frozenset(MYST_EXTENSIONS)):
    """myst-parser's parser for the block structure only, as myst-nb reads notebooks."""
    parser = create_md_parser(MdParserConfig(enable_extensions=set(extensions)), RendererHTML)
    parser.disable("inline", ignoreInvalid=True)  # inline syntax cannot change the block structure
    return parser


def option_lines(lines: list[str]) -> tuple[dict[str, str], int]:
    """The ``:key: value`` options that start a directive's body, and how many lines they take."""
    matches = list(itertools.takewhile(bool, (_OPTION.match(line.strip()) for line in lines)))
    return {match["key"]: match["value"] for match in matches}, len(matches)


def _options(content: list[tuple[int, str]]) -> tuple[dict, list[tuple[int, str]]]:
    """A directive's options (``:key: value`` lines or a ``---`` YAML block) and the rest of its body."""
    if content and content[0][1].strip() == "---":
        closing = next((i for i in range(1, len(content)) if content[i][1].strip() == "---"), None)
        if closing is not None:
            try:
                options = yaml.safe_load("\n".join(text for _, text in content[1:closing])) or {}
            except yaml.YAMLError:
                options = {}
            return (options if isinstance(options, dict) else {}), content[closing + 1 :]
    options, count = option_lines([text for _, text in content])
    return options, content[count:]


def _blocks(text: str, first_line: int, depth: int) -> list:
    found: list = []
    lines = text.splitlines()
    tokens = block_parser().parse(text + "\n")
    for position, token in enumerate(tokens):
        if token.level != 0 or token.map is None:
            continue  # nested in a list or quote: not a block of the lesson's structure
        start, stop = token.map
        line = first_line + start
        if token.type == "heading_open":
            inline = tokens[position + 1]
            found.append(Heading(line, int(token.tag[1:]), inline.content.strip(), depth))
        elif token.type == "paragraph_open":
            found.append(Paragraph(line, tokens[position + 1].content, depth))
        elif token.type in ("fence", "colon_fence"):
            info = token.info.strip()
            directive = DIRECTIVE.match(info)
            content = list(enumerate(token.content.splitlines(), start=line + 1))
            end = first_line + stop - 1  # the closing fence (map's end is exclusive)
            last = lines[stop - 1].strip() if stop - 1 < len(lines) else ""
            closed = stop - 1 > start and last.startswith(token.markup) and not last.strip(token.markup[0])
            if directive:
                options, body = _options(content)
                argument = directive["argument"].strip()
                fence = Fence(line, end, directive["name"], True, argument, options, body, depth, closed, token.markup)
                found.append(fence)
                if directive["name"] != CODE_CELL and body:
                    found.extend(_blocks("\n".join(text for _, text in body), body[0][0], depth + 1))
            else:
                language = info.split()[0] if info else ""
                found.append(Fence(line, end, language, False, "", {}, content, depth, closed, token.markup))
    return found


def parse(text: str) -> LessonSource:
    """The blocks of a lesson's text, with 1-based line numbers of the file."""
    lines = text.splitlines()
    end = front_matter_end(lines)
    # Parse the body only; blank lines keep the front matter's lines so numbers stay the file's.
    body = "\n".join([""] * end + lines[end:])
    return LessonSource(lines, _blocks(body, 1, 0), end)
