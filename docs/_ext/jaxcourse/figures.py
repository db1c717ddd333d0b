"""Every figure a page shows from figures/ was drawn by this run, and has alt text."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from .failures import report


def figure_file(app: Sphinx, docname: str, image: nodes.image) -> Path:
    """The file an image node shows, whichever way its uri is written at this point.

    Sphinx's image collector (itself a doctree-read handler) rewrites ``uri`` from
    the author's document-relative path to a source-root-relative one and adds
    ``candidates``; which one a handler sees depends on the order the handlers ran.
    Checked against Sphinx 9.0.4; tests/test_units.py covers both forms.
    """
    if "candidates" in image:  # already rewritten relative to the source root
        return Path(app.srcdir, image["uri"]).resolve()
    return Path(app.env.relfn2path(image["uri"], docname)[1]).resolve()


def check_figures(app: Sphinx, docname: str, doctree: nodes.document, drawn: list[str]) -> None:
    """Every image taken from figures/ must have been written by this run (``drawn``) and have alt text."""
    figures_dir = Path(app.srcdir, app.config.course_figures_dir).resolve()
    for image in doctree.findall(nodes.image):
        target = figure_file(app, docname, image)
        if target.parent != figures_dir or not target.exists():
            continue  # a missing file is Sphinx's own "image file not readable" error
        line = image.line or (image.parent.line if image.parent is not None else None) or 1
        if target.name not in drawn:
            report(
                docname,
                line,
                f"figure {target.relative_to(Path(app.srcdir).resolve())} was not drawn by this run; "
                "call save_figure(...) for it in a hidden cell of the lesson",
                subtype="figure",
            )
        if not image.get("alt"):
            report(docname, line, "figure has no alt text; add ':alt:' to the figure", subtype="figure")
