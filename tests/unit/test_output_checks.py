"""The output stage's checks and fixes, on markup and doctrees built in memory.

The accessibility fixes of each page's HTML (``accessibility``), the JAX API links of the Python roles
(``apilinks``), the lines of inline nodes (``inlinelines``), the images a page may show and the SVG the site
may publish (``publishcheck``), the raw HTML a page's text may not bring (``rawhtml``), and pages no table of
contents reaches (``toctree``).
"""

from __future__ import annotations

import types
from importlib.metadata import version
from unittest import mock

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document
from jaxcourse.output import accessibility, apilinks, inlinelines, publishcheck, rawhtml, toctree
from jaxcourse.source import located
from sphinx import addnodes

SAFE_SVG = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>'
UNSAFE_SVG = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>'


def new_doc() -> nodes.document:
    return new_document("page.md", get_default_settings(Parser))


def errors_reported():
    """Capture the located errors: (docname, line, subtype, message) each."""
    return mock.patch.object(located.logger, "error")


def located_calls(error) -> tuple[list[tuple], list[str]]:
    """The places (docname, line, subtype) the captured errors were reported at, and their messages."""
    calls = error.call_args_list
    return [(*call.kwargs["location"], call.kwargs["subtype"]) for call in calls], [call.args[0] for call in calls]


# --- accessibility ------------------------------------------------------------------------------------------------


def test_toctree_captions_get_the_heading_level_their_role_requires_in_body_toc_and_furos_sidebar():
    caption = '<p class="caption" role="heading"><span>Phase 01</span></p>'
    context = {"body": caption, "toc": caption, "furo_navigation_tree": caption, "title": caption}
    accessibility.on_html_page_context(None, "page", "page.html", context, None)
    fixed = '<p class="caption" role="heading" aria-level="2"><span>Phase 01</span></p>'
    assert (context["body"], context["toc"], context["furo_navigation_tree"]) == (fixed, fixed, fixed)
    assert context["title"] == caption  # a key the fix does not own is left alone
    kept = {"body": '<p class="caption" role="heading" aria-level="3">x</p>'}
    accessibility.on_html_page_context(None, "page", "page.html", kept, None)
    assert kept["body"] == '<p class="caption" role="heading" aria-level="3">x</p>'


def test_furos_sidebar_is_found_only_when_the_theme_rendered_it():
    assert accessibility.furo_sidebar_key({"furo_navigation_tree": "<ul></ul>"}) == "furo_navigation_tree"
    assert accessibility.furo_sidebar_key({"furo_navigation_tree": None}) is None
    assert accessibility.furo_sidebar_key({}) is None


def test_code_that_may_scroll_sideways_takes_keyboard_focus_once():
    context = {"body": '<div class="highlight"><pre><span>x</span></pre></div><pre tabindex="-1">y</pre>'}
    accessibility.on_html_page_context(None, "page", "page.html", context, None)
    assert (
        context["body"]
        == '<div class="highlight"><pre tabindex="0"><span>x</span></pre></div><pre tabindex="-1">y</pre>'
    )


def test_equations_and_tables_that_scroll_are_focusable_groups_named_by_what_they_hold():
    body = (
        '<div class="math-wrapper docutils container"><div class="math">e</div></div>'
        '<div class="table-wrapper colwidths-auto docutils container">\n<table class="docutils">\n'
        '<caption><span class="caption-text">Run <em>times</em> &amp; &quot;costs&quot;</span>'
        '<a class="headerlink" href="#t">¶</a></caption><tr></tr></table></div>'
        '<div class="table-wrapper"><table><tr></tr></table></div>'
    )
    labelled = accessibility.label_scrolling_wrappers(body)
    assert '<div class="math-wrapper docutils container" tabindex="0" role="group" aria-label="Equation">' in labelled
    assert (
        '<div class="table-wrapper colwidths-auto docutils container" tabindex="0" role="group" '
        'aria-label="Run times &amp; &quot;costs&quot;">'
    ) in labelled
    assert '<div class="table-wrapper" tabindex="0" role="group" aria-label="Table">' in labelled
    assert accessibility.label_scrolling_wrappers(labelled) == labelled  # already focusable: untouched


# --- JAX API links ------------------------------------------------------------------------------------------------


def test_a_jax_name_links_to_its_page_in_the_api_documentation_of_the_running_jax():
    template = "https://docs.jax.dev/en/jax-v{version}/"
    assert apilinks.api_url(template, "jax.jit", "func", "0.10.2") == (
        "https://docs.jax.dev/en/jax-v0.10.2/_autosummary/jax.jit.html"
    )
    assert (
        apilinks.api_url(template, "jax.numpy", "mod", "0.10.2") == "https://docs.jax.dev/en/jax-v0.10.2/jax.numpy.html"
    )
    assert apilinks.is_jax_name("jax") and apilinks.is_jax_name("jax.numpy.sum")
    assert not apilinks.is_jax_name("jaxlib") and not apilinks.is_jax_name("numpy.sum")


def xref(target: str, reftype: str = "func", domain: str = "py") -> addnodes.pending_xref:
    return addnodes.pending_xref("", refdomain=domain, reftype=reftype, reftarget=target)


def test_an_unresolved_python_reference_to_jax_becomes_an_outside_link_and_any_other_stays_unresolved():
    app = types.SimpleNamespace(config=types.SimpleNamespace(course_jax_api_url="https://api.example/{version}/"))
    contnode = nodes.literal("", "jax.jit")
    reference = apilinks.link_jax_names(app, None, xref("jax.jit"), contnode)
    jax_version = version("jax")
    assert reference["refuri"] == f"https://api.example/{jax_version}/_autosummary/jax.jit.html"
    assert reference["internal"] is False and reference.children == [contnode]
    assert reference["reftitle"] == f"jax.jit in the JAX {jax_version} API documentation"
    module = apilinks.link_jax_names(app, None, xref("jax.numpy", "mod"), nodes.literal("", "jax.numpy"))
    assert module["refuri"] == f"https://api.example/{jax_version}/jax.numpy.html"
    for node in (xref("numpy.sum"), xref("jax.jit", "ref"), xref("jax.jit", domain="std")):
        assert apilinks.link_jax_names(app, None, node, nodes.literal("", "x")) is None


# --- the lines of inline nodes ------------------------------------------------------------------------------------


def test_a_reference_on_a_paragraphs_third_line_is_placed_on_that_line():
    document = new_doc()
    paragraph = nodes.paragraph()
    paragraph.line, paragraph.source = 10, "/site/docs/page.md"
    first = nodes.reference("", "first")
    nested = nodes.literal("", "code")
    emphasis = nodes.emphasis("", "", nodes.Text("an\nemphasis with "), nested)
    late = nodes.reference("", "late")
    message = nodes.system_message("a parser's\n\n\nmessage", level=2, type="WARNING")
    paragraph += [
        nodes.Text("Start "),
        first,
        nodes.Text("\nsecond line, "),
        emphasis,
        message,
        nodes.Text(" and "),
        late,
    ]
    document += paragraph
    inlinelines.locate_inline_nodes(None, document)
    assert (first.line, emphasis.line, nested.line, late.line) == (10, 11, 12, 12)
    # In the paragraph's file too: Sphinx reports a node with a line and no file at '<unknown>:LINE'.
    assert {node.source for node in (first, emphasis, nested, late)} == {"/site/docs/page.md"}


def test_an_inline_node_with_a_line_of_its_own_keeps_it():
    document = new_doc()
    paragraph = nodes.paragraph()
    paragraph.line = 4
    placed = nodes.reference("", "placed")
    placed.line = 7
    paragraph += [nodes.Text("a\nb "), placed]
    unplaced = nodes.paragraph("", "", nodes.Text("x\n"), nodes.reference("", "y"))  # its block has no line
    document += [paragraph, unplaced]
    unplaced.line = None  # docutils gives a node added to a document the document's current line
    inlinelines.locate_inline_nodes(None, document)
    assert placed.line == 7 and unplaced[1].line is None


# --- images and SVG -----------------------------------------------------------------------------------------------


def page_with_images(*uris: str, line: int = 5) -> tuple[nodes.document, list[nodes.image]]:
    document = new_doc()
    images = []
    for offset, uri in enumerate(uris):
        paragraph = nodes.paragraph()
        paragraph.line = line + offset
        image = nodes.image(uri=uri)
        paragraph += image
        document += paragraph
        images.append(image)
    return document, images


def test_an_image_from_another_site_fails_at_its_line_and_leaves_the_page():
    document, images = page_with_images("https://evil.example/p.png", "//cdn.example/q.png", "data:image/png;base64,AA")
    app = types.SimpleNamespace(env=types.SimpleNamespace(docname="docs/page"), srcdir="/nowhere")
    with errors_reported() as error:
        publishcheck.check_shown_images(app, document)
    places, messages = located_calls(error)
    assert places == [("docs/page", 5, "image"), ("docs/page", 6, "image")]
    assert messages[0].startswith("the image https://evil.example/p.png would load from another site")
    assert [image["uri"] for image in document.findall(nodes.image)] == ["data:image/png;base64,AA"]


def test_an_svg_a_page_shows_that_could_run_script_fails_at_its_line_and_leaves_the_page(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "bad.svg").write_text(UNSAFE_SVG, encoding="utf-8")
    (tmp_path / "figures" / "good.svg").write_text(SAFE_SVG, encoding="utf-8")
    (tmp_path / "figures" / "broken.svg").write_text("<svg><unclosed></svg>", encoding="utf-8")
    document, images = page_with_images("figures/bad.svg", "figures/good.svg", "figures/broken.svg", "figures/none.svg")
    app = types.SimpleNamespace(env=types.SimpleNamespace(docname="lessons/x"), srcdir=str(tmp_path))
    with errors_reported() as error:
        publishcheck.check_shown_images(app, document)
    places, messages = located_calls(error)
    assert [(line, subtype) for _, line, subtype in places] == [(5, "svg"), (7, "svg")]
    assert messages[0].startswith("figures/bad.svg holds ") and "(and 1 more)" in messages[0]
    # A file that is not there is Sphinx's own error to report.
    assert [image["uri"] for image in document.findall(nodes.image)] == ["figures/good.svg", "figures/none.svg"]


def test_an_image_that_names_no_file_fails_at_its_line_and_leaves_the_page(tmp_path):
    """'![a chart]()': Sphinx makes the address that of the page's folder, and would only warn, unlocated."""
    (tmp_path / "docs" / "images").mkdir(parents=True)
    (tmp_path / "docs" / "images" / "chart.png").write_bytes(b"\x89PNG")
    document, images = page_with_images("docs", "docs/images", "docs/images/chart.png", "docs/" + "x" * 300 + ".png")
    app = types.SimpleNamespace(env=types.SimpleNamespace(docname="docs/page"), srcdir=str(tmp_path))
    with errors_reported() as error:
        publishcheck.check_shown_images(app, document)
    places, messages = located_calls(error)
    assert places == [("docs/page", 5, "image"), ("docs/page", 6, "image")]
    assert messages[0] == (
        "this image names no file (its address is empty, or a folder): give it the path of the image file"
    )
    # A name too long for a file is Sphinx's own "image file not readable" to report, not a crash.
    assert [image["uri"] for image in document.findall(nodes.image)] == ["docs/images/chart.png", images[3]["uri"]]


def test_raw_markup_for_another_builder_is_dropped_without_a_word_and_raw_html_is_refused():
    """QuantEcon's lectures open with a '{raw} jupyter' banner, which Sphinx's HTML writer never writes."""
    document = new_doc()
    for line, (formats, text) in enumerate([("jupyter", "<div>banner</div>"), ("latex", "\\newpage"), ("html", "<b>")]):
        paragraph = nodes.paragraph()
        paragraph.line = 3 + line
        paragraph += nodes.raw(text=text, format=formats)
        document += paragraph
    app = types.SimpleNamespace(env=types.SimpleNamespace(docname="docs/lecture"))
    with errors_reported() as error:
        rawhtml.refuse_in_doctree(app, document)
    places, messages = located_calls(error)
    assert places == [("docs/lecture", 5, "raw-html")] and messages[0].startswith("raw HTML '<b>'")
    assert not list(document.findall(nodes.raw))
    # The checker agrees: only a raw block an HTML page would show is reported.
    source = "```{raw} jupyter\n<div>banner</div>\n```\n\n```{raw} html\n<b>x</b>\n```\n"
    assert [(found.line, found.snippet) for found in rawhtml.find(source)] == [(5, "{raw} html")]


def test_a_hard_break_in_markdown_is_published_and_a_br_tag_is_refused():
    """NumPy's air-quality tutorial ends its lines with backslashes: myst-parser makes raw '<br />' nodes of them."""
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser as MystParser

    source = "`Ip` = sub-index\\\n`Cp` = concentration  \nlast line\n\nOne<br />two\n"
    document = publish_doctree(source, parser=MystParser(), settings_overrides={"report_level": 5})
    app = types.SimpleNamespace(env=types.SimpleNamespace(docname="docs/air"))
    with errors_reported() as error:
        rawhtml.refuse_in_doctree(app, document)
    places, messages = located_calls(error)
    assert places == [("docs/air", 5, "raw-html")] and messages[0].startswith("raw HTML '<br />'")
    assert [raw.astext() for raw in document.findall(nodes.raw)] == ["<br />\n", "<br />\n"]
    assert [paragraph.astext() for paragraph in document.findall(nodes.paragraph)][1] == "Onetwo"


def test_every_published_svg_is_checked_and_named_by_the_source_it_was_copied_from(tmp_path):
    outdir, srcdir = tmp_path / "html", tmp_path / "src"
    (outdir / "_images").mkdir(parents=True)
    (outdir / "_static").mkdir()
    (outdir / "_images" / "bad.svg").write_text(UNSAFE_SVG, encoding="utf-8")
    (outdir / "_images" / "good.svg").write_text(SAFE_SVG, encoding="utf-8")
    (outdir / "_static" / "icon.svg").write_text(UNSAFE_SVG, encoding="utf-8")
    env = types.SimpleNamespace(images={"figures/bad.svg": ({"lessons/x"}, "bad.svg")})
    app = types.SimpleNamespace(
        env=env, outdir=str(outdir), srcdir=str(srcdir), builder=types.SimpleNamespace(format="html")
    )
    with mock.patch.object(publishcheck.logger, "error") as error:
        publishcheck.check_published_svgs(app, None)
        publishcheck.check_published_svgs(app, RuntimeError("the build failed"))  # nothing more to check
    calls = error.call_args_list
    assert [call.kwargs["location"] for call in calls] == [
        f"{srcdir / 'figures' / 'bad.svg'}:1",
        f"{outdir / '_static' / 'icon.svg'}:1",
    ]
    assert all(call.kwargs["subtype"] == "svg" for call in calls)
    assert calls[0].args[0].startswith("this SVG, published as _images/bad.svg, holds ")


# --- pages in no table of contents --------------------------------------------------------------------------------


def test_a_page_no_table_of_contents_reaches_is_reported_at_its_first_line():
    env = types.SimpleNamespace(
        all_docs={name: 0 for name in ("index", "in-toc", "included", "orphan", "lost-a", "lost-b")},
        files_to_rebuild={"in-toc": {"index"}},
        included={"index": {"included"}},
        metadata={"orphan": {"orphan": ""}, "lost-a": {"title": "x"}},
    )
    app = types.SimpleNamespace(config=types.SimpleNamespace(root_doc="index"))
    with errors_reported() as error:
        toctree.pages_outside_every_toctree(app, env)
    places, messages = located_calls(error)
    assert places == [("lost-a", 1, "toctree"), ("lost-b", 1, "toctree")]
    assert "list it in a toctree" in messages[0] and "'orphan: true'" in messages[0]


@pytest.mark.parametrize("included", [{}, {"index": set()}])
def test_a_site_that_includes_nothing_still_checks_its_pages(included):
    env = types.SimpleNamespace(all_docs={"index": 0, "lost": 0}, files_to_rebuild={}, included=included, metadata={})
    app = types.SimpleNamespace(config=types.SimpleNamespace(root_doc="index"))
    with errors_reported() as error:
        toctree.pages_outside_every_toctree(app, env)
    assert [call.kwargs["location"] for call in error.call_args_list] == [("lost", 1)]


def test_an_exercise_sphinx_gave_no_number_is_titled_exercise_and_a_numbered_one_is_left_to_sphinx():
    """sphinx-exercise numbers exercises through the table of contents: on an orphan page the bar was empty."""
    from sphinx_exercise.nodes import exercise_enumerable_node

    document = new_doc()
    for ident, subtitle in (("ex-numbered", ""), ("ex-orphaned", " (Evaluate it)"), ("ex-bare", "")):
        exercise = exercise_enumerable_node(ids=[ident])
        exercise += nodes.title("", "", *([nodes.Text(subtitle)] if subtitle else []))
        document += exercise
    env = types.SimpleNamespace(toc_fignumbers={"docs/page": {"exercise": {"ex-numbered": (1,)}}})
    config = types.SimpleNamespace(numfig_format={"exercise": "Exercise %s"})
    toctree.name_unnumbered_exercises(types.SimpleNamespace(env=env, config=config), document, "docs/page")
    titles = [title.astext() for title in document.findall(nodes.title)]
    assert titles == ["", "Exercise (Evaluate it)", "Exercise"]
