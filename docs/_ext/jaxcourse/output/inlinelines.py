"""References, roles and math inside a paragraph report their own line.

myst-parser gives a paragraph (or caption, or title) the line it starts on and its inline nodes none, so
Sphinx would report a broken reference on a paragraph's third line at its first. The paragraph's text keeps
each line break as a newline, so counting the newlines before an inline node gives its line.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx


def locate_inline_nodes(app: Sphinx, doctree: nodes.document) -> None:
    for block in doctree.findall(nodes.TextElement):
        if isinstance(block, nodes.Inline) or block.line is None:
            continue  # an inline node is placed by its block; a block without a line cannot help
        _place(block, block.line, block.line, block.source)


def _place(element: nodes.Element, line: int, block_line: int, source: str | None) -> int:
    """Give the inline nodes under ``element`` their lines, in the block's file; return the line after its text.

    A node with a line and no file would be reported at '<unknown>:LINE', so each gets the block's file too.
    """
    for child in element.children:
        if isinstance(child, nodes.system_message):
            continue  # a parser's message placed in the paragraph; its text is not the author's
        if isinstance(child, nodes.Text):
            line += child.count("\n")
            continue
        if isinstance(child, nodes.Inline) and child.line in (None, block_line):
            child.line, child.source = line, child.source or source
        line = _place(child, line, block_line, source)
    return line
