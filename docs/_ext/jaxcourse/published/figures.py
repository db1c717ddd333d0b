"""Figures from figures/: each shown in the reader's theme, drawn by this run, with alt text."""

from __future__ import annotations

import posixpath
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

from ..output.publishcheck import node_line
from ..runtime.charts import DARK_SUFFIX
from ..source.located import report


class ThemedFigures(SphinxTransform):
    """Show figures/<stem>.svg in the light theme and its twin figures/<stem>-dark.svg in the dark one.

    ``save_figure`` draws both; furo shows an image with the class ``only-light``
    or ``only-dark`` in that theme alone. The twin is added as a transform, before
    Sphinx's image collector runs at doctree-read, so it is copied like any image.
    """

    default_priority = 700

    def apply(self, **kwargs) -> None:
        figures_dir = Path(self.env.srcdir, self.config.course_figures_dir).resolve()
        for image in list(self.document.findall(nodes.image)):
            uri = image["uri"]
            path = Path(self.env.relfn2path(uri, self.env.docname)[1]).resolve()
            dark = path.with_name(f"{path.stem}{DARK_SUFFIX}{path.suffix}")
            if path.parent != figures_dir or path.stem.endswith(DARK_SUFFIX) or not dark.is_file():
                continue
            twin = image.deepcopy()
            twin["uri"] = posixpath.join(posixpath.dirname(uri), dark.name)
            image["classes"].append("only-light")
            twin["classes"].append("only-dark")
            # Lazy: a browser then fetches only the one its theme shows (the other is display: none).
            image["loading"] = twin["loading"] = "lazy"
            image.parent.insert(image.parent.index(image) + 1, twin)


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
        if "only-dark" in image["classes"]:
            continue  # the dark twin of a figure checked here (ThemedFigures), drawn by the same call
        target = figure_file(app, docname, image)
        if target.parent != figures_dir or not target.exists():
            continue  # a missing file is Sphinx's own "image file not readable" error
        line = node_line(image)
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
