"""Render math to MathML at build time, so equations need no script and no network.

Registered as Sphinx's HTML math renderer ``mathml``; browsers draw MathML
Core natively, and the page carries no MathJax request to a CDN.
"""

from __future__ import annotations

import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util import logging

logger = logging.getLogger(__name__)


# latex2mathml passes a command it does not know through as a literal identifier.
_UNKNOWN_COMMAND = re.compile(r"<mi>(\\[A-Za-z]+)</mi>")


def _to_mathml(self, node: nodes.Element, latex: str, display: str) -> str:
    try:
        mathml = convert(latex, display=display)
    except Exception as error:  # latex2mathml raises many exception types
        problem = f"{type(error).__name__} {error}".strip()
        logger.warning(f"cannot render math {latex!r}: {problem}", location=node, type="course", subtype="math")
        return f"<code>{self.encode(latex)}</code>"
    unknown = _UNKNOWN_COMMAND.search(mathml)
    if unknown:
        logger.warning(
            f"cannot render math {latex!r}: unknown LaTeX command {unknown[1]}",
            location=node,
            type="course",
            subtype="math",
        )
    return mathml


def visit_math(self, node: nodes.math) -> None:
    self.body.append(_to_mathml(self, node, node.astext(), "inline"))
    raise nodes.SkipNode


def visit_math_block(self, node: nodes.math_block) -> None:
    label = f' id="{node["ids"][0]}"' if node.get("ids") else ""
    math = _to_mathml(self, node, node.astext(), "block")
    self.body.append(f'<div class="math-display"{label}>{math}</div>\n')
    raise nodes.SkipNode
