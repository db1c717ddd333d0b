"""Sphinx setup: the course's events, directives, nodes and settings (see the package docstring)."""

from __future__ import annotations

import base64
import logging as stdlib_logging
import mimetypes
import os
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util import logging

from .execution import progress, scheduling
from .execution.parser import CourseParser
from .output import accessibility, apilinks, inlinelines, mathfont, mathml, pagestyles, publishcheck, rawhtml, toctree
from .privateapi import drop_unlocated_unknown_domain_warning
from .published import (
    changepage,
    compatpage,
    downloads,
    executedpage,
    partialbuild,
    report,
    searchsummaries,
    stamps,
)
from .published.directives import ExecutionReport, LessonIndex, RecordedRun, StartHere
from .published.domain import CourseDomain
from .published.figures import ThemedFigures
from .published.placeholders import PLACEHOLDERS, skip_placeholder
from .runtime import kernel
from .source import options, pagesource

logger = logging.getLogger(__name__)


def collect_site_pages(app: Sphinx):
    """/index.html leads to the home page (docs/index); /404.html serves missing addresses."""
    home = app.builder.get_target_uri(app.config.root_doc)
    if app.config.root_doc != "index":
        yield "index", {"redirect_target": home}, "redirect.html"
    # A host serves 404.html at any depth, so its link is absolute when the site's URL is known.
    base = app.config.html_baseurl.rstrip("/")
    context = {"home": f"{base}/{home}" if base else home, "icon_data_uri": favicon_data_uri(app)}
    yield "404", context, "404.html"


def favicon_data_uri(app: Sphinx) -> str:
    """The site's favicon as a data: URI, for the 404 page, which is served at any depth."""
    favicon = app.config.html_favicon
    if not favicon or "://" in favicon:
        return ""
    path = Path(app.confdir, favicon)
    kind = mimetypes.guess_type(path.name)[0] or "image/x-icon"
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def configure_notebooks(app: Sphinx, config) -> None:
    """Run lessons in the course kernel, and render their outputs with the course's plugin.

    Lessons declare the ordinary 'python3' kernel, aliased here to the course's
    kernel spec (``jaxcourse.runtime.kernel``), which the environment's setup installed.
    Kernels write their process-level stderr to the build's reports, not to its console.
    """
    problem = kernel.installed_problem()
    if problem:
        raise ConfigError(problem)
    config.nb_kernel_rgx_aliases = {"python3": kernel.NAME, **config.nb_kernel_rgx_aliases}
    config.nb_render_plugin = "jaxcourse"
    # Widget state in a notebook would make myst-nb load require.js and the widget manager from a CDN;
    # the course shows no widgets (the renderer refuses their views), so it loads neither.
    config.nb_ipywidgets_js = {}
    # Every .md and .ipynb page is read by the course's reader (myst-nb's documented hook), which adds the
    # hidden cells.
    extensions = {"myst_extensions": sorted(config.myst_enable_extensions)}
    reader = ("jaxcourse.source.reader.read_page", extensions, False)
    # .ipynb pages too (myst-nb's custom formats may replace its own .ipynb reader): every promise holds there.
    notebook_reader = ("jaxcourse.source.reader.read_ipynb_page", extensions, False)
    config.nb_custom_formats = {**config.nb_custom_formats, ".md": reader, ".ipynb": notebook_reader}
    os.environ[kernel.STDERR_DIR_VARIABLE] = str(Path(app.doctreedir, "kernel-stderr"))


def create_execution_cache(app: Sphinx) -> None:
    """Create the execution cache (its folder and database) before parallel readers fork.

    jupyter-cache makes them on first use, with a check-then-mkdir (``JupyterCacheBase.path``): two
    readers opening an empty cache at once crashed with FileExistsError. Made here, in the main
    process at builder-inited, every reader finds them.
    """
    if app.config.nb_execution_mode != "cache" and not app.config.course_require_recorded:
        return
    from jupyter_cache import get_cache

    get_cache(app.config.nb_execution_cache_path).db  # noqa: B018 - creates the folder and the tables


def add_static_dir(app: Sphinx, config) -> None:
    # At config-inited, so the pickled and the fresh configuration agree on rebuilds.
    static = str(Path(__file__).parent / "static")
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def setup(app: Sphinx) -> dict:
    # nbclient logs a cell timeout through traitlets before raising it; the build reports
    # every failed run itself, once and located, so keep that logger quiet.
    stdlib_logging.getLogger("traitlets").setLevel(stdlib_logging.CRITICAL)
    drop_unlocated_unknown_domain_warning()  # every problem is one located line
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
    app.add_transform(ThemedFigures)
    app.add_directive("recorded-run", RecordedRun)
    app.add_directive("lesson-index", LessonIndex)
    app.add_directive("start-here", StartHere)
    app.add_directive("execution-report", ExecutionReport)
    app.add_directive("change-report", changepage.ChangeReport)
    app.add_directive("compatibility-matrix", compatpage.CompatibilityMatrix)
    # After myst_nb's setup: myst-nb's parser, with a dead kernel reported at its page and line.
    app.add_source_parser(CourseParser, override=True)
    app.connect("builder-inited", stamps.note_build_start)
    app.connect("builder-inited", create_execution_cache)
    app.connect("builder-inited", partialbuild.leave_out_search)
    app.connect("env-before-read-docs", scheduling.balance_chunks)
    app.connect("env-before-read-docs", progress.start_counting)
    app.connect("source-read", pagesource.on_source_read)
    app.connect("doctree-read", inlinelines.locate_inline_nodes)
    # After the inline nodes have their lines: raw HTML in a page's text is reported where it stands.
    app.connect("doctree-read", rawhtml.refuse_in_doctree)
    app.connect("doctree-read", publishcheck.check_shown_images)
    app.connect("doctree-read", executedpage.on_doctree_read)
    app.connect("doctree-read", mathfont.collect_characters)
    # After the header and the transcript are in place (executedpage), which it leaves out.
    app.connect("doctree-read", searchsummaries.collect, priority=600)
    app.connect("env-get-outdated", report.pages_to_reread)
    app.connect("env-get-outdated", pagesource.pages_run_in_another_environment)
    # Before the report's table replaces its placeholder, which marks where the link goes.
    app.connect("doctree-resolved", compatpage.link_from_report, priority=400)
    app.connect("doctree-resolved", report.on_doctree_resolved)
    app.connect("doctree-resolved", changepage.on_doctree_resolved)
    app.connect("doctree-resolved", rawhtml.sanitize_resolved)
    app.connect("doctree-resolved", toctree.name_unnumbered_exercises)
    app.connect("build-finished", report.write_json)
    app.connect("build-finished", changepage.write_files)
    app.connect("build-finished", mathfont.write_font)
    app.connect("build-finished", compatpage.publish_verdicts)
    app.connect("build-finished", downloads.resolve_download_links)
    app.connect("build-finished", publishcheck.check_published_svgs)
    app.connect("build-finished", searchsummaries.write_data)
    app.connect("build-finished", partialbuild.write_placeholders)
    app.connect("env-check-consistency", toctree.pages_outside_every_toctree)
    app.connect("missing-reference", apilinks.link_jax_names)
    app.connect("html-collect-pages", collect_site_pages)
    # After furo (priority 500) has rendered its navigation tree into the context.
    app.connect("html-page-context", accessibility.on_html_page_context, priority=600)
    app.connect("html-page-context", pagestyles.leave_out_mystnb_css)
    app.connect("html-page-context", pagestyles.slim_code_markup)
    app.connect("html-page-context", searchsummaries.add_to_search_page)
    app.connect("config-inited", options.check)
    app.connect("config-inited", add_static_dir)
    app.connect("config-inited", configure_notebooks)
    app.connect("config-inited", searchsummaries.configure)
    app.connect("config-inited", compatpage.leave_out_page_without_verdicts)
    app.add_css_file("course.css")
    # After sphinx-togglebutton's script (added at config-inited with the default priority): names its buttons.
    app.add_js_file("course.js", priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 5}
