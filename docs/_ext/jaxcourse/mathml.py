"""Render math to MathML at build time, so equations need no script and no network.

Registered as Sphinx's HTML math renderer ``mathml``; browsers draw MathML
Core natively, and the page carries no MathJax request to a CDN.
"""

from __future__ import annotations

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _to_mathml(self, node: nodes.Element, latex: str, display: str) -> str:
    try:
        return convert(latex, display=display)
    except Exception as error:  # latex2mathml raises many exception types
        logger.warning(f"cannot render math {latex!r}: {error}", location=node, type="course", subtype="math")
        return f"<code>{self.encode(latex)}</code>"


def visit_math(self, node: nodes.math) -> None:
    self.body.append(_to_mathml(self, node, node.astext(), "inline"))
    raise nodes.SkipNode


def visit_math_block(self, node: nodes.math_block) -> None:
    label = f' id="{node["ids"][0]}"' if node.get("ids") else ""
    math = _to_mathml(self, node, node.astext(), "block")
    self.body.append(f'<div class="math-display"{label}>{math}</div>\n')
    raise nodes.SkipNode
