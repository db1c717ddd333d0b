"""No image the site publishes loads from outside, and no SVG can run script: checked where used, and at the end.

SVG outputs are cleaned as they are rendered, but Sphinx copies the lessons' figures, and any image a page
references, into the site as they are. So at ``doctree-read`` an image with another site's address, one that
names no file, or an SVG file a page shows that ``jaxcourse.output.safesvg`` finds unsafe, fails the build at its
line; at ``build-finished`` every ``.svg`` under the output folder is read the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from ..source.located import report
from . import safesvg

logger = logging.getLogger(__name__)


def _svg_problems(path: Path) -> list[str]:
    try:
        return safesvg.problems(path.read_text(encoding="utf-8", errors="replace"))
    except safesvg.UnsafeSvg as error:
        return [str(error)]


def _summary(found: list[str]) -> str:
    return found[0] + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")


def node_line(node: nodes.Element) -> int:
    """The line a node (or else its parent) comes from, or 1."""
    return node.line or (node.parent.line if node.parent is not None else None) or 1


def check_shown_images(app: Sphinx, doctree: nodes.document) -> None:
    """At doctree-read: no image loads from outside the site or names no file, and every SVG file a page shows
    is safe.

    Each fails the build at the line that shows the image, and the image is left out of the page.
    """
    for node in list(doctree.findall(nodes.image)):
        uri = node.get("uri", "")
        if uri.startswith("//") or (":" in uri.split("/", 1)[0] and not uri.startswith("data:")):
            report(
                app.env.docname,
                node_line(node),
                f"the image {uri} would load from another site, and a page loads nothing from outside: copy the "
                "file beside the page and show it by its path (nox -s port copies local images and drops remote ones)",
                subtype="image",
            )
            node.parent.remove(node)
            continue
        if uri.startswith("data:"):
            continue
        path = Path(app.srcdir, uri)  # Sphinx has made it relative to the source folder by now
        # '![a chart]()': Sphinx would only warn, unlocated, that it cannot copy the folder. (os.path, unlike
        # pathlib, answers False for an address too long to be a file name, rather than raising.)
        if os.path.isdir(path):
            report(
                app.env.docname,
                node_line(node),
                "this image names no file (its address is empty, or a folder): give it the path of the image file",
                subtype="image",
            )
            node.parent.remove(node)
            continue
        if not uri.lower().endswith(".svg"):
            continue
        if path.is_file() and (found := _svg_problems(path)):
            report(
                app.env.docname,
                node_line(node),
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
