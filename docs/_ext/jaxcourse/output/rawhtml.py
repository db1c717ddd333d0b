"""Raw HTML in a page's text is refused: prose is input too, and pull requests bring it.

Outputs are sanitized, but a page's text would reach the page as written (a raw HTML block, inline HTML, the
``{raw}`` directive: ``<img onerror>``, ``<script>``). Each is reported at its line with the MyST markup that
says the same thing: the checker reads the source with myst-parser's tokens (:func:`find`); the build reports
and removes raw nodes that the course's renderer did not make (:func:`refuse_in_doctree`), so even a build
that goes on publishes none.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from docutils import nodes
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from ..source.frontmatter import front_matter_end
from ..source.lessonsource import DIRECTIVE, MYST_EXTENSIONS, option_lines

_TAG = re.compile(r"<\s*/?\s*([A-Za-z][\w-]*)")
#: Nothing but HTML comments (the JAX docs' "freshness" notes): invisible, so dropped without a word.
_ONLY_COMMENTS = re.compile(r"^\s*(?:<!--(?:(?!-->).)*-->\s*)+$", re.S)
#: A tag's MyST counterpart, for the message.
ALTERNATIVES = {
    "img": "an image is '![alt text](path)' or a '{figure}' directive with ':alt:'",
    "a": "a link is '[text](address)' or '<address>'; a target to link to is '(name)=' above a heading",
    "br": "a line break is a backslash at the end of the line, or a new paragraph",
    "b": "bold is '**text**'",
    "strong": "bold is '**text**'",
    "i": "emphasis is '*text*'",
    "em": "emphasis is '*text*'",
    "code": "code is `text` in backticks",
    "sup": "a superscript is '{sup}`text`'",
    "sub": "a subscript is '{sub}`text`'",
    "details": "a collapsed block is an admonition with ':class: dropdown'",
    "table": "a table is a pipe table or a '{list-table}' directive",
    "center": "centring is not needed: a '{figure}' is centred, and text flows as the theme sets it",
    "div": "a block with a class is a '{container}' directive with the class as its argument",
    "span": "plain text or '{sup}'/'{sub}'/'**bold**' say what a span would",
    "p": "a paragraph is text between blank lines",
    "hr": "a rule is a line of '---' between blank lines",
    "script": "a page runs no script: show code in a code cell instead",
    "iframe": "a page embeds no other page: link to it with '[text](address)'",
    "style": "a page brings no style sheet: the theme styles every page",
}
GENERAL = "write it in MyST markup instead (see docs/contributing.md, 'Prose is input too')"


@dataclass(frozen=True)
class RawHtml:
    line: int
    snippet: str

    @property
    def message(self) -> str:
        return message(self.snippet)


def message(snippet: str) -> str:
    """The one message for a piece of raw HTML: what it is, and the MyST that replaces it."""
    shown = " ".join(snippet.split())
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    tag = _TAG.search(snippet)
    hint = ALTERNATIVES.get(tag[1].lower(), GENERAL) if tag else GENERAL
    what = "a {raw} directive" if snippet.startswith("{raw}") else f"raw HTML {shown!r}"
    return f"{what} in the page's text is not published (prose is input, as outputs are): {hint}"


def publishes_html(formats: str) -> bool:
    """Whether a raw block for these formats reaches an HTML page: ``{raw} jupyter`` or ``{raw} latex`` never does
    (Sphinx's HTML writer skips it), as QuantEcon's notebook banners are written."""
    return "html" in formats.lower().split() or not formats.strip()


def is_comment(html: str) -> bool:
    """Whether raw HTML is nothing but comments, which a browser never shows or runs."""
    return bool(_ONLY_COMMENTS.match(html))


@functools.cache
def _parser():
    return create_md_parser(MdParserConfig(enable_extensions=set(MYST_EXTENSIONS)), RendererHTML)


def _spans(text: str, first_line: int = 1) -> list[tuple[int, int, str]]:
    """(first line, last line, markup) of every raw HTML block, inline HTML and {raw} directive, 1-based."""
    found: list[tuple[int, int, str]] = []
    for token in _parser().parse(text + "\n"):
        if token.map is None:
            continue
        line = first_line + token.map[0]
        last = first_line + token.map[1] - 1
        if token.type == "html_block":
            if not is_comment(token.content):
                found.append((line, last, token.content.strip()))
        elif token.type == "inline":
            offset = 0
            for child in token.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    offset += 1
                elif child.type == "html_inline":  # a tag may span lines: '<br' then '/>'
                    if not is_comment(child.content):
                        found.append((line + offset, line + offset + child.content.count("\n"), child.content))
                    offset += child.content.count("\n")
        elif token.type in ("fence", "colon_fence") and (directive := DIRECTIVE.match(token.info.strip())):
            if directive["name"] == "raw":
                formats = token.info.strip()[len("{raw}") :].strip()
                if publishes_html(formats):
                    found.append((line, last, f"{{raw}} {formats}"))
            elif directive["name"] != "code-cell":
                # A directive's body is MyST too (an admonition, an exercise): look inside, at its lines.
                body = token.content.splitlines()
                start = front_matter_end(body)  # a directive's options may be a '---' YAML block too
                start += option_lines(body[start:])[1]
                found += _spans("\n".join([""] * start + body[start:]), line + 1)
    return found


def find(text: str, first_line: int = 1) -> list[RawHtml]:
    """Every raw HTML block, inline HTML and {raw} directive in MyST text, with its 1-based line."""
    return [RawHtml(line, snippet) for line, _, snippet in _spans(text, first_line)]


def lines_with_html(text: str) -> set[int]:
    """The 1-based lines of MyST text that hold raw HTML (every line of a block), directives' bodies included."""
    return {line for first, last, _ in _spans(text) for line in range(first, last + 1)}


def find_in_page(text: str) -> list[RawHtml]:
    """:func:`find` over a page file, its front matter skipped but counted; one per line."""
    lines = text.splitlines()
    end = front_matter_end(lines)
    first_on_line: dict[int, RawHtml] = {}
    for found in find("\n".join([""] * end + lines[end:])):
        first_on_line.setdefault(found.line, found)
    return sorted(first_on_line.values(), key=lambda found: found.line)


def is_hard_break(node: nodes.raw) -> bool:
    """Whether a raw node is myst-parser's own hard break (a line ending in a backslash, or in two spaces): it
    writes '<br />' for HTML followed by its LaTeX twin, a pair that raw HTML in the page does not make."""
    siblings = node.parent.children
    twin = siblings[siblings.index(node) + 1] if node is not siblings[-1] else None
    return (
        node.astext() == "<br />\n"
        and isinstance(twin, nodes.raw)
        and twin.get("format") == "latex"
        and twin.astext() == "\\\\\n"
    )


def refuse_in_doctree(app, doctree: nodes.document) -> None:
    """At doctree-read: report and remove every raw node the course's renderer did not make."""
    from ..source.located import report
    from .publishcheck import node_line
    from .render import OUTPUT_MARK

    docname = app.env.docname
    reported: set[int] = set()
    for node in list(doctree.findall(nodes.raw)):
        if node.get(OUTPUT_MARK) or is_hard_break(node):
            continue
        if is_comment(node.astext()) or not publishes_html(node.get("format", "")):
            node.parent.remove(node)  # nothing a reader sees, or for another builder
            continue
        if (line := node_line(node)) not in reported:  # '<b>' and '</b>' on one line: one message
            reported.add(line)
            report(docname, line, message(node.astext().strip() or "{raw}"), subtype="raw-html")
        node.parent.remove(node)


def sanitize_resolved(app, doctree: nodes.document, docname: str) -> None:
    """At doctree-resolved: sanitize raw HTML that a post-transform made (myst-nb's cross-page {glue})."""
    from . import sanitize
    from .render import OUTPUT_MARK

    for node in list(doctree.findall(nodes.raw)):
        if node.get(OUTPUT_MARK) or "html" not in node.get("format", "").split():
            continue
        clean = sanitize.html(node.astext())
        node.replace_self(nodes.raw(text=clean, format="html", classes=node.get("classes", []), **{OUTPUT_MARK: True}))
