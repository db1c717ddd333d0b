"""Sphinx extension for the executable JAX course.

Each component lives in its own module:

- ``options``: the ``course_*`` settings, declared once and checked early;
- ``frontmatter``: lesson metadata, shared with the lesson checker;
- ``inject``: hidden setup/verdict cells added at ``source-read``;
- ``runtime``: the kernel-side half (run stamp, verdict, ``save_figure``);
- ``record`` and ``lessonpage``: turn the executed doctree into the page;
- ``mathml``: equations rendered at build time, no MathJax;
- ``accessibility``: markup fixes axe-core asks for;
- ``downloads``: executed notebook, MyST source and starter notebook per lesson;
- ``checker``, ``mdblocks``: the lesson checker (``python -m jaxcourse.checker``);
- ``scheduling``: lessons spread evenly over parallel reading processes;
- ``sitebuild``: build beside the published site and swap on success;
- ``directives``, ``report``, ``domain``, ``nodes``: site pages and their data.
"""

from __future__ import annotations

import logging as stdlib_logging
import os
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from . import accessibility, frontmatter, inject, lessonpage, mathml, options, report, scheduling
from .directives import ExecutionReport, LessonIndex, RecordedRun
from .domain import CourseDomain
from .nodes import PLACEHOLDERS, skip_placeholder

__version__ = "0.1.0"

logger = logging.getLogger(__name__)


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    """Validate a lesson's front matter and add its hidden setup and verdict cells."""
    if not lessonpage.is_lesson(app, docname):
        return
    path = Path(app.env.doc2path(docname))
    try:
        front = frontmatter.parse(source[0])
        problems = frontmatter.validate(front, path)
    except frontmatter.FrontMatterError as error:
        problems = [frontmatter.Problem(error.line, error.message)]
    if problems:
        for problem in problems:
            logger.error(problem.message, location=(docname, problem.line), type="course", subtype="frontmatter")
        # Publish a stub instead, so one bad header gives its own errors and no follow-on noise.
        source[0] = (
            f"---\norphan: true\n---\n# {path.stem}\n\nThis lesson was not built: its front matter is invalid.\n"
        )
        return
    fingerprint = current_fingerprint(app)
    app.env.get_domain("course").fingerprints[docname] = fingerprint
    source[0] = inject.inject_cells(
        source[0],
        front,
        lesson_path=path,
        figures_dir=Path(app.srcdir, app.config.course_figures_dir),
        fingerprint=fingerprint,
    )


def current_fingerprint(app: Sphinx) -> str:
    return inject.environment_fingerprint([Path(app.srcdir, name) for name in app.config.course_environment_files])


def lessons_run_in_another_environment(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Lessons last read under other packages or requirements are read, and executed, again."""
    fingerprint = current_fingerprint(app)
    return [docname for docname, seen in env.get_domain("course").fingerprints.items() if seen != fingerprint]


def collect_site_pages(app: Sphinx):
    """/index.html leads to the home page (docs/index); /404.html serves missing addresses."""
    home = app.builder.get_target_uri(app.config.root_doc)
    if app.config.root_doc != "index":
        yield "index", {"redirect_target": home}, "redirect.html"
    # A host serves 404.html at any depth, so its link is absolute when the site's URL is known.
    base = app.config.html_baseurl.rstrip("/")
    yield "404", {"home": f"{base}/{home}" if base else home}, "404.html"


def use_course_kernel(app: Sphinx, config) -> None:
    """Run lessons written for 'python3' in the course's kernel spec (kernels/jaxcourse).

    It is ipykernel with JAX_PLATFORMS=cpu and only error-level kernel logs, so
    a build prints no per-kernel transport warning. Kernels inherit JUPYTER_PATH.
    """
    data_dir = str(Path(__file__).parent)  # Jupyter looks for <data dir>/kernels/<name>/kernel.json
    paths = os.environ.get("JUPYTER_PATH", "").split(os.pathsep)
    if data_dir not in paths:
        os.environ["JUPYTER_PATH"] = os.pathsep.join([data_dir, *filter(None, paths)])
    config.nb_kernel_rgx_aliases = {"python3": "jaxcourse", **config.nb_kernel_rgx_aliases}


def add_static_dir(app: Sphinx, config) -> None:
    # At config-inited, so the pickled and the fresh configuration agree on rebuilds.
    static = str(Path(__file__).parent / "static")
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def setup(app: Sphinx) -> dict:
    # accessible-pygments (imported by furo) configures the root logger at INFO on import,
    # which makes nbclient print a timestamped line per kernel; keep its warnings only.
    stdlib_logging.getLogger("traitlets").setLevel(stdlib_logging.WARNING)
    options.register(app)
    for node in PLACEHOLDERS:
        app.add_node(
            node,
            html=(skip_placeholder, None),
            latex=(skip_placeholder, None),
            text=(skip_placeholder, None),
        )
    app.add_html_math_renderer(
        "mathml", inline_renderers=(mathml.visit_math, None), block_renderers=(mathml.visit_math_block, None)
    )
    app.add_domain(CourseDomain)
    app.add_directive("recorded-run", RecordedRun)
    app.add_directive("lesson-index", LessonIndex)
    app.add_directive("execution-report", ExecutionReport)
    app.connect("env-before-read-docs", scheduling.balance_chunks)
    app.connect("source-read", on_source_read)
    app.connect("doctree-read", lessonpage.on_doctree_read)
    app.connect("env-get-outdated", report.pages_to_reread)
    app.connect("env-get-outdated", lessons_run_in_another_environment)
    app.connect("doctree-resolved", report.on_doctree_resolved)
    app.connect("build-finished", report.write_json)
    app.connect("html-collect-pages", collect_site_pages)
    # After furo (priority 500) has rendered its navigation tree into the context.
    app.connect("html-page-context", accessibility.on_html_page_context, priority=600)
    app.connect("config-inited", options.check)
    app.connect("config-inited", add_static_dir)
    app.connect("config-inited", use_course_kernel)
    app.add_css_file("course.css")
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
