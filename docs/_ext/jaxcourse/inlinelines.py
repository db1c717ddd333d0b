"""References, roles and math inside a paragraph report their own line.

myst-parser gives a paragraph (or caption, or title) the line it starts on, and
the inline nodes inside it none, so Sphinx would report a broken reference on a
paragraph's third line at its first. The paragraph's text keeps each line break
as a newline, so counting the newlines before an inline node gives its line.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx


def locate_inline_nodes(app: Sphinx, doctree: nodes.document) -> None:
    for block in doctree.findall(nodes.TextElement):
        if isinstance(block, nodes.Inline) or block.line is None:
            continue  # an inline node is placed by its block; a block without a line cannot help
        line = block.line
        for node in block.findall(include_self=False):
            if isinstance(node, nodes.Text):
                line += node.count("\n")
            elif isinstance(node, nodes.Inline) and node.line in (None, block.line):
                node.line = line
