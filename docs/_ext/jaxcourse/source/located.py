"""A page's problem as one build error at its file and line (``<file>:<line>: ERROR: <message>``).

The ``course.<subtype>`` warning types let a site suppress one kind (``suppress_warnings``).
"""

from __future__ import annotations

from sphinx.util import logging

from . import frontmatter

logger = logging.getLogger(__name__)


def report(docname: str, line: int, message: str, subtype: str = "exec") -> None:
    """Log ``message`` as a build error at ``line`` of ``docname``."""
    logger.error(message, location=(docname, line), type="course", subtype=subtype)


def report_front_matter(docname: str, problems: list[frontmatter.Problem]) -> None:
    for problem in problems:
        report(docname, problem.line, problem.message, subtype="frontmatter")
