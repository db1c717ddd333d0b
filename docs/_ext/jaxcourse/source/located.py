"""A page's problem as one build error at its file and line, the form every part of the build reports in.

Sphinx's logger prints ``<file>:<line>: ERROR: <message>`` once, and ``-W --keep-going`` turns it into
a failed build that lists every problem. The ``course.<subtype>`` warning types let a site suppress one
kind (``suppress_warnings``), as Sphinx's own types do.
"""

from __future__ import annotations

from sphinx.util import logging

from . import frontmatter

logger = logging.getLogger(__name__)


def report(docname: str, line: int, message: str, subtype: str = "exec") -> None:
    logger.error(message, location=(docname, line), type="course", subtype=subtype)


def report_front_matter(docname: str, problems: list[frontmatter.Problem]) -> None:
    for problem in problems:
        report(docname, problem.line, problem.message, subtype="frontmatter")
