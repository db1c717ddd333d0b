"""No SVG the site publishes can run script or load anything: checked where it is used, and at the end.

SVG outputs are cleaned as they are rendered (``jaxcourse.render``), but Sphinx
also copies the lessons' figures, and any image a page references, into the
site as they are. At ``doctree-read`` every SVG file a page shows (a
``{figure}``, its dark twin, ``![alt](file.svg)``) is read with
``jaxcourse.safesvg``: one that holds a script, an event handler, an outside
reference or entities fails the build at the line that shows it. At
``build-finished`` every ``.svg`` under the output folder is read the same
way, so nothing that reached the site another way slips through.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from . import safesvg
from .failures import report

logger = logging.getLogger(__name__)


def _svg_problems(path: Path) -> list[str]:
    try:
        return safesvg.problems(path.read_text(encoding="utf-8", errors="replace"))
    except safesvg.UnsafeSvg as error:
        return [str(error)]


def _summary(found: list[str]) -> str:
    return found[0] + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")


def check_shown_svgs(app: Sphinx, doctree: nodes.document) -> None:
    """At doctree-read: every SVG file this page shows is safe, or the build fails at the line that shows it."""
    for node in doctree.findall(nodes.image):
        uri = node.get("uri", "")
        if not uri.lower().endswith(".svg") or "://" in uri or uri.startswith("data:"):
            continue
        path = Path(app.srcdir, uri)  # Sphinx has made it relative to the source folder by now
        if path.is_file() and (found := _svg_problems(path)):
            line = node.line or (node.parent.line if node.parent is not None else None) or 1
            report(
                app.env.docname,
                line,
                f"{uri} holds {_summary(found)}; the site publishes no SVG that can run script or load from outside",
                subtype="svg",
            )
            node.parent.remove(node)  # not copied into the site either


def _sources(app: Sphinx) -> dict[str, str]:
    """Published image name -> the source file it was copied from (as Sphinx's image registry has it)."""
    images = getattr(app.env, "images", {})
    return {unique: source for source, (_, unique) in images.items()}


def check_published_svgs(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    sources = _sources(app)
    for path in sorted(outdir.rglob("*.svg")):
        relative = path.relative_to(outdir).as_posix()
        if found := _svg_problems(path):
            logger.error(
                f"this SVG, published as {relative}, holds {_summary(found)}; the site publishes no SVG that can "
                "run script or load from outside",
                # A location with a colon is printed as it is: the file, at its first line (where <svg> opens).
                location=f"{Path(app.srcdir, sources[path.name]) if path.name in sources else path}:1",
                type="course",
                subtype="svg",
            )
