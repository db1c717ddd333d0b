"""Every executed page keeps the site's promises, not only the lessons: notebook pages under docs/
(ported tutorials, say) are stamped, reported and recorded, take their execution settings, and
show what their cells display only once it is safe; nothing a cell writes lands in the checkout.

One tiny site: a lesson and four notebook pages under docs/, built once.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT, build, make_site
from tiny import code_cell, lesson, notebook_page

# What a hostile or careless cell can display: each kind of markup a page must not publish live.
HOSTILE_HTML = (
    "<b onclick=\"steal()\">bold</b><script>document.title='owned'</script>"
    "<iframe src='https://evil.example/frame'></iframe><img src='https://evil.example/pixel.png' alt='pixel'>"
    "<a href='javascript:steal()'>click</a><a href='//evil.example/x'>away</a><a href='#here'>here</a>"
    "<form action='/steal'><input name='secret'></form><style>body { display: none }</style>"
)
HOSTILE_MARKDOWN = "## A heading\n\n<iframe src='https://evil.example'></iframe> [a link](https://evil.example/page)"
# What libraries really emit, which must survive: rich's styled <pre>, a styled table cell.
RICH_HTML = (
    '<pre style="white-space:pre;overflow-x:auto;line-height:normal;font-family:Menlo,monospace">'
    '<span style="color: #008000; font-weight: bold">green</span></pre>'
    '<table border="1" class="dataframe"><tr><td style="color: red; position: fixed">cell</td></tr></table>'
)
DISPLAYS = code_cell(
    "from IPython.display import HTML, Markdown, display\n\n"
    f"display(HTML({HOSTILE_HTML!r}))\n"
    f"display(Markdown({HOSTILE_MARKDOWN!r}))\n"
    f"display(HTML({RICH_HTML!r}))"
)
# An SVG that runs script when its own address is opened, and LaTeX that would overlay the page and
# load a background from another host: both are outputs, published inert.
HOSTILE_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="document.title=1">'
    "<script>document.title=2</script>"
    '<rect width="20" height="20" fill="#0072b2" onclick="steal()"/>'
    '<image href="https://evil.example/pixel.png"/></svg>'
)
HOSTILE_LATEX = (
    r"$$\style{position:fixed;inset:0;background:#fff url(https://evil.example/bg.png)}{x}"
    r" + \href{javascript:steal()}{y}$$"
)
RICH_OUTPUTS = code_cell(
    "from IPython.display import SVG, Latex, display\n\n"
    f"display(SVG({HOSTILE_SVG!r}), metadata={{'image/svg+xml': {{}}}})\n"
    f"display(Latex({HOSTILE_LATEX!r}))",
    alt="A blue square.",
)
# Saved widget state would make myst-nb load scripts from a CDN: the page loads none.
WIDGET_STATE = (
    "widgets:\n  application/vnd.jupyter.widget-state+json:\n    version_major: 2\n    version_minor: 0\n"
    "    state:\n      abc:\n        model_name: IntSliderModel\n"
)
PLOT = (
    "```{code-cell} ipython3\n---\nmystnb:\n  image:\n    alt: A rising line from 1 to 2.\n---\n"
    "import matplotlib.pyplot as plt\n\nplt.plot([1, 2])\nplt.show()\n```\n"
)
PAGES = {
    "plain": notebook_page(
        "A plain notebook page",
        code_cell("value = 6 * 7\nprint('value:', value)")
        + "\n(plain-value)=\n## Where the value comes from\n\nSix sevens,\\\nforty-two.\n",
    ),
    # Links to a label and to a heading of another page, which a one-page build of this one leaves unexecuted.
    "devices": notebook_page(
        "A page with devices",
        code_cell("import jax\n\nprint('devices:', len(jax.devices()))")
        + "\nSee {ref}`plain-value` and [its heading](plain.md#where-the-value-comes-from).\n",
    ).replace("orphan: true\n", "orphan: true\nexecution:\n  cpu_devices: 4\n"),
    "outputs": notebook_page("A page that displays things", DISPLAYS + "\n" + PLOT + "\n" + RICH_OUTPUTS).replace(
        "orphan: true\n", "orphan: true\n" + WIDGET_STATE
    ),
    # A relative path in a cell is the kernel's scratch folder, never the checkout.
    "writes": notebook_page(
        "A page that writes a file", code_cell("with open('stray.txt', 'w') as out:\n    out.write('x')")
    ),
}
# The only inline scripts a page may hold: furo's line that sets the colour theme before the page
# paints, and sphinx-togglebutton's settings (its hint words are the course's, read from conf.py).
# Anything else inline would have come from a page.
_CONF = ast.parse((ROOT / "conf.py").read_text(encoding="utf-8"))
_TOGGLE_HINTS = {
    node.targets[0].id: node.value.value
    for node in _CONF.body
    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "").startswith("togglebutton_hint")
}
THEME_INLINE_SCRIPTS = {
    'document.body.dataset.theme = localStorage.getItem("theme") || "auto";',
    f"let toggleHintShow = '{_TOGGLE_HINTS['togglebutton_hint']}';",
    f"let toggleHintHide = '{_TOGGLE_HINTS['togglebutton_hint_hide']}';",
    "let toggleOpenOnPrint = 'true';",
    "var togglebuttonSelector = '.toggle, .admonition.dropdown';",
}
LESSON = lesson("shown-values", code_cell("print('printed')\n6 * 7"))
# Colour codes are for a terminal: a lesson that prints them (as rich and IPython do) publishes the text.
COLOURS = lesson(
    "colours",
    code_cell(
        "from rich.console import Console\n\n"
        "print('\\x1b[31mred\\x1b[0m and plain')\n"
        "Console(force_terminal=True, color_system='truecolor').print('[bold green]rich green[/]')\n"
        "'\\x1b[34mblue value\\x1b[0m'"
    )
    + "\n```{recorded-run}\n```\n",
)
LESSONS = {"shown-values": LESSON, "colours": COLOURS}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srcdir = make_site(tmp_path_factory.mktemp("notebook-pages"), lessons=LESSONS)
    for name, text in PAGES.items():
        (srcdir / "docs" / f"{name}.md").write_text(text, encoding="utf-8")
    result = build(srcdir, "-j", "2")
    assert result.returncode == 0, result.output
    return result


def article(site, page):
    return site.html(f"{page}.html").select_one("article")


@pytest.mark.parametrize("name", sorted(PAGES))
def test_a_notebook_page_is_stamped_under_its_title(site, name):
    stamp = article(site, f"docs/{name}").select_one(".page-header .run-stamp").get_text(" ", strip=True)
    assert stamp.startswith("Executed by this build on CPU at ") and " · JAX " in stamp


@pytest.mark.parametrize("name", sorted(PAGES))
def test_a_notebook_page_is_in_the_execution_report_and_the_recordings(site, name):
    rows = json.loads((site.outdir / "execution.json").read_text(encoding="utf-8"))
    assert rows[f"docs/{name}"]["kind"] == "page" and rows[f"docs/{name}"]["succeeded"]
    assert rows[f"docs/{name}"]["runtime_seconds"] > 0
    recordings = json.loads((site.outdir / "recordings.json").read_text(encoding="utf-8"))["pages"]
    assert recordings[f"docs/{name}"]["source"] == f"docs/{name}.md"
    report = site.html("docs/execution-report.html").select("table.execution-report tbody tr td:first-child")
    assert f"docs/{name}" in [cell.get_text(strip=True) for cell in report]


def test_the_report_lists_lessons_first_then_the_other_pages(site):
    rows = [row["kind"] for row in json.loads((site.outdir / "execution.json").read_text(encoding="utf-8")).values()]
    assert rows == ["lesson"] * len(LESSONS) + ["page"] * len(PAGES)


def test_a_notebook_page_gets_the_devices_its_front_matter_asks_for(site):
    text = article(site, "docs/devices").get_text(" ", strip=True)
    assert "devices: 4" in text and "4 simulated CPU devices" in text


def test_hostile_html_and_markdown_are_published_inert(site):
    page = article(site, "docs/outputs")
    outputs = page.select(".cell_output")[0]
    markup = str(outputs)
    assert outputs.find("b").get_text() == "bold" and not outputs.find("b").has_attr("onclick")
    for tag in ("script", "iframe", "form", "input", "style"):
        assert outputs.find(tag) is None, tag
    assert "evil.example" not in "".join(str(tag.attrs) for tag in outputs.find_all(True))
    assert outputs.find("a", href="#here") is not None  # an on-page link stays
    assert not outputs.find_all("a", href=re.compile(r"^(javascript:|//|https?:)"))
    assert outputs.find("h2").get_text() == "A heading"  # markdown rendered, its raw HTML shown as text
    assert "&lt;iframe" in markup


def test_a_hard_break_in_the_text_is_published_as_markdown_writes_it(site):
    """A line ending in a backslash: myst-parser writes it as raw '<br />', which the build knows from an author's."""
    paragraph = next(p for p in article(site, "docs/plain").find_all("p") if "Six sevens" in p.get_text())
    assert [str(child).strip() for child in paragraph.children] == ["Six sevens,", "<br/>", "forty-two."]


def test_the_markup_libraries_emit_survives(site):
    outputs = article(site, "docs/outputs").select(".cell_output")[0]
    pre = next(pre for pre in outputs.find_all("pre") if "green" in pre.get_text())
    assert "white-space:pre" in pre["style"] and "font-family" in pre["style"]
    assert "color:#008000" in pre.find("span")["style"].replace(" ", "")
    cell = outputs.find("td")
    assert cell.get_text() == "cell" and "color:red" in cell["style"] and "position" not in cell["style"]


def test_an_image_output_takes_its_alt_text_from_the_cell_metadata(site):
    images = article(site, "docs/outputs").select(".cell_output img[src]")  # the hostile one lost its source
    assert [image["alt"] for image in images] == ["A rising line from 1 to 2.", "A blue square."]


def test_an_svg_output_is_published_drawn_but_unable_to_run_or_load(site):
    images = article(site, "docs/outputs").select(".cell_output img[src]")
    (image,) = [img for img in images if img["src"].endswith(".svg")]
    published = (site.outdir / "docs" / image["src"]).resolve().read_text(encoding="utf-8")
    assert '<rect width="20" height="20" fill="#0072b2"' in published  # still draws
    for forbidden in ("<script", "onload", "onclick", "evil.example", "document.title"):
        assert forbidden not in published, forbidden


def test_a_latex_output_cannot_restyle_the_page_or_link_away(site):
    (math,) = article(site, "docs/outputs").select(".cell_output math")
    assert math.get_text(strip=True) == "x+y"
    for element in [math, *math.find_all(True)]:
        assert not {"style", "href", "class"} & set(element.attrs), element


def test_no_built_page_or_image_can_run_script_from_an_output(site):
    """Over the whole site: no script or handler came from an output, and no page loads a script from outside."""
    handler = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
    for path in site.outdir.rglob("*.svg"):
        text = path.read_text(encoding="utf-8")
        assert "<script" not in text and not handler.search(text), path.name
    from bs4 import BeautifulSoup

    for path in site.outdir.rglob("*.html"):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for element in soup.find_all(True):
            assert not [name for name in element.attrs if name.lower().startswith("on")], (path.name, element)
        for script in soup.find_all("script"):
            # The theme's and extensions' own scripts from _static, and their inline settings; no widget state.
            if script.get("src"):
                source = script["src"].replace("../", "")
                assert source.startswith("_static/") or source == "searchindex.js", (path.name, script)
            else:
                assert script.get_text(strip=True) in THEME_INLINE_SCRIPTS, (path.name, script)


def test_displayed_values_are_recorded_with_what_was_printed(site):
    transcript = article(site, "lessons/shown-values").get_text()
    recordings = json.loads((site.outdir / "recordings.json").read_text(encoding="utf-8"))["pages"]
    assert recordings["shown-values"]["cells"][0]["shown"] == "printed\n42\n"
    assert "42" in transcript


def test_no_page_or_download_carries_a_terminal_escape(site):
    """What the colour lesson printed is on its page, in its transcript and its notebooks, as text."""
    page = article(site, "lessons/colours")
    transcript = page.select_one(".recorded-transcript").get_text()
    for text in ("red and plain", "rich green", "blue value"):
        assert text in transcript and text in page.select_one(".cell_output").get_text()
    published = [
        path
        for path in site.outdir.rglob("*")
        # Every text file a reader can open; not Sphinx's own pickles under .doctrees.
        if path.suffix in (".html", ".ipynb", ".md", ".txt", ".json", ".js", ".svg") and ".doctrees" not in path.parts
    ]
    downloads = [path for path in published if path.suffix in (".ipynb", ".md") and "colours" in path.name]
    assert len(downloads) >= 2, downloads  # the executed and the starter notebook, at least
    for path in published:
        assert b"\x1b[" not in path.read_bytes(), path.relative_to(site.outdir)


def test_nothing_a_cell_writes_lands_in_the_checkout(site):
    assert not list(site.srcdir.rglob("stray.txt"))


def one_page_build(site, name: str):
    """nox -s lesson: one page executed, every other executed page a stub."""
    outdir = site.srcdir.parent / "_build" / "one"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxcourse.tools.sitebuild",
            str(outdir),
            "--lesson",
            name,
            "-D",
            "nb_execution_mode=cache",
        ],
        cwd=site.srcdir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads((outdir / "execution.json").read_text(encoding="utf-8"))
    (row,) = rows.values()
    assert f"{row['docname']}: its cells ran in {row['runtime_seconds']:.1f} s in the run of " in result.stdout
    return rows, outdir


LEFT_OUT = "is not part of this build of chosen pages; <code>nox -s docs</code> builds the whole site."


def test_a_one_lesson_build_runs_no_notebook_page(site):
    rows, outdir = one_page_build(site, "shown-values")
    assert list(rows) == ["shown-values"]
    assert "“A plain notebook page” " + LEFT_OUT in (outdir / "docs" / "plain.html").read_text(encoding="utf-8")
    # Sphinx wrote the lesson and the home page that lists it; every other page says it was left out.
    sources = [path for folder in ("docs", "lessons") for path in (site.srcdir / folder).glob("[!_]*.*")]
    pages = {path.relative_to(site.srcdir).with_suffix(".html").as_posix() for path in sources}
    pages.remove("docs/compatibility.html")  # not a page until `nox -s compat` has verdicts (compatpage)
    left_out = {name for name in pages if LEFT_OUT in (outdir / name).read_text(encoding="utf-8")}
    assert left_out == pages - {"lessons/shown-values.html", "docs/index.html"}
    search = (outdir / "search.html").read_text(encoding="utf-8")
    assert "Search is not part of this build of chosen pages" in search and 'href="docs/index.html"' in search
    assert not (outdir / "searchindex.js").exists()


def test_a_one_page_build_takes_a_notebook_page_by_its_file(site):
    rows, outdir = one_page_build(site, "docs/devices.md")
    assert list(rows) == ["docs/devices"]
    # The unexecuted page keeps its labels and headings, so the built page's links to them still resolve.
    page = (outdir / "docs" / "devices.html").read_text(encoding="utf-8")
    assert 'href="plain.html#plain-value"' in page and 'href="plain.html#where-the-value-comes-from"' in page
    left_out = (outdir / "docs" / "plain.html").read_text(encoding="utf-8")
    assert LEFT_OUT in left_out and "Six sevens" not in left_out and 'href="index.html"' in left_out
    assert LEFT_OUT in (outdir / "lessons" / "shown-values.html").read_text(encoding="utf-8")
