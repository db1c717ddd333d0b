"""Pages from elsewhere keep every promise: ported with nox -s port, built with the source site's conventions.

A small "other site" is written here (in this project's own words: the JAX docs' text is not ours
to commit), with what the JAX docs hold: a page built from its .ipynb while a .md twin sits beside
it, a page in a subfolder, badges and remote images, an inline data: image, a local image, a local
SVG whose nodes are links (as pprof draws them), raw HTML (a tag wrapped over two lines too), references to labels
and pages that exist only there, {func} roles on jax names and JAX's short ones (lax.cond), a
heading level skipped, an eqnarray, a cell that warns on stderr, a cell tagged raises-exception
that does not raise, and one tagged skip-execution. It is ported into a tiny site, which must
build: the standard tags mean what myst-nb says, stderr is shown and listed in the execution
report, and the .ipynb page is stamped like any other.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zlib

import nbformat
import pytest
from conftest import build, make_site
from jaxcourse.tools import port

KERNEL = "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n"
MYST_FRONT = f"---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n{KERNEL}---\n"


def guide_cell(code: str, tag: str | None) -> str:
    """A code cell of the guide, with one of myst-nb's standard tags or none."""
    options = f":tags: [{tag}]\n\n" if tag else ""
    return f"```{{code-cell}}\n{options}{code}\n```\n"


GUIDE = (
    MYST_FRONT
    + """
# A guide from another site

[![Open in Colab](https://colab.example/assets/badge.svg)](https://colab.example/guide)

<!--* freshness: reviewed *-->

<center>
<img src="_static/pixel.png" alt="A single grey pixel">
</center>

The call {func}`jax.jit` compiles, {func}`lax.cond` branches, and {ref}`a section there <only-there>`
explains more; the [notebook](notebooks/walkthrough) and {doc}`the other guide <other-guide>` too.
A remote picture ![a chart](https://images.example/chart.png) becomes a link.
The call graph ![Two boxes joined by an arrow](_static/graph.svg) is kept, without its links.<br
/>A line break wrapped over two lines goes too.
So is an inline one ![a dot](data:image/png;base64,INLINE_PAYLOAD).

### A heading two levels down

$$
y = \\left\\{
\\begin{eqnarray}
1, & x > 0 \\\\
0, & x \\le 0
\\end{eqnarray}\\right.
$$

$$ y = 2x + 1 $$ (guide-line)

The line {eq}`guide-line` is numbered on this page, which no table of contents lists.
This guide can be downloaded as {nb-download}`guide.ipynb`.

"""
    + "\n".join(
        guide_cell(code, tag)
        for code, tag in [
            ('import warnings\n\nwarnings.warn("this guide warns on purpose")\nprint("warned")', None),
            ('print("this cell may raise, and does not")', "raises-exception"),
            ('print("shown, never run")', "skip-execution"),
            ('with open("data/counts.txt") as counts:\n    print("counts:", counts.read().split())', None),
            ('print("the code of this cell starts hidden")', "hide-input"),
            ('for row in range(60):\n    print("row", row)', "scroll-output"),
        ]
    )
).replace("INLINE_PAYLOAD", "A" * 4000)  # as long as the pictures the JAX docs inline
WALKTHROUGH_CELLS = [
    nbformat.v4.new_markdown_cell("# A walkthrough notebook\n\nIt [links back](../guide) to the guide."),
    nbformat.v4.new_code_cell("total = sum(range(5))\nprint('total:', total)"),
]


#: pprof's call graphs wrap every node in a link (an <a> with an xlink:title tooltip).
GRAPH_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="60" height="20">'
    '<a xlink:title="f (4MB)"><rect width="20" height="20" fill="#ddd"/></a>'
    '<a xlink:href="https://pprof.example/g"><rect x="40" width="20" height="20" fill="#ddd"/></a></svg>'
)


def png(path) -> None:
    """A 1x1 grey PNG, written from scratch."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def other_site(tmp_path_factory):
    docs = tmp_path_factory.mktemp("other") / "docs"
    (docs / "notebooks").mkdir(parents=True)
    (docs / "_static").mkdir()
    (docs / "conf.py").write_text("exclude_patterns = ['notebooks/*.md']\n", encoding="utf-8")
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    png(docs / "_static" / "pixel.png")
    (docs / "data").mkdir()
    (docs / "data" / "counts.txt").write_text("3 1 4\n", encoding="utf-8")  # read by the guide's code
    (docs / "_static" / "graph.svg").write_text(GRAPH_SVG, encoding="utf-8")
    # As Anaconda names an environment's kernel: Python, run here by the course's own kernel.
    kernelspec = {"name": "conda-env-jax-py", "display_name": "Python [conda env:jax]", "language": "python"}
    # As optax's reduce_on_plateau example asks: no cell time limit, which a build never grants.
    metadata = {"kernelspec": kernelspec, "execution": {"timeout": -1}}
    # As Jupyter and Colab keep a pasted image: the cell's attachment, named in its text.
    picture = base64.b64encode((docs / "_static" / "pixel.png").read_bytes()).decode()
    pasted = nbformat.v4.new_markdown_cell("A pasted picture:\n\n![A grey pixel](attachment:pixel.png)")
    pasted["attachments"] = {"pixel.png": {"image/png": picture}}
    notebook = nbformat.v4.new_notebook(cells=[*WALKTHROUGH_CELLS, pasted], metadata=metadata)
    nbformat.write(notebook, docs / "notebooks" / "walkthrough.ipynb")
    # The .md twin the other site does not build from: it must not be the one ported.
    (docs / "notebooks" / "walkthrough.md").write_text(MYST_FRONT + "\n# The stale twin\n", encoding="utf-8")
    return docs


@pytest.fixture(scope="module")
def ported(other_site, tmp_path_factory):
    srcdir = make_site(tmp_path_factory.mktemp("ported-site"))
    pages = port.port(other_site, srcdir / "docs" / "ported", ["guide", "notebooks/walkthrough"])
    return srcdir, {page.name: page for page in pages}


@pytest.fixture(scope="module")
def site(ported):
    srcdir, _ = ported
    result = build(srcdir, "-j", "2")
    assert result.returncode == 0, result.output
    return result


def changes(pages, name) -> list[str]:
    return [f"{change.where}: {change.what}" for change in pages[name].changes]


def test_the_port_takes_the_notebook_the_other_site_builds_from(ported):
    srcdir, pages = ported
    assert pages["notebooks/walkthrough"].source.suffix == ".ipynb"
    assert (srcdir / "docs" / "ported" / "notebooks" / "walkthrough.ipynb").is_file()
    assert not (srcdir / "docs" / "ported" / "notebooks" / "walkthrough.md").exists()
    assert pages["guide"].summary().startswith("ported ") and " from guide.md: changed " in pages["guide"].summary()


def test_a_notebook_that_asks_for_no_cell_time_limit_gets_the_build_s(ported):
    srcdir, pages = ported
    assert "metadata: execution timeout -1 (no limit) went: the build keeps its cell limit" in changes(
        pages, "notebooks/walkthrough"
    )
    notebook = nbformat.read(srcdir / "docs/ported/notebooks/walkthrough.ipynb", as_version=4)
    assert notebook.metadata["execution"] == {}


def test_the_port_lists_what_it_changed_and_keeps_what_resolves(ported):
    srcdir, pages = ported
    text = (srcdir / "docs" / "ported" / "guide.md").read_text(encoding="utf-8")
    listed = "\n".join(changes(pages, "guide"))
    assert "colab.example" not in text and "A remote picture [image: a chart](https://images.example/chart.png)" in text
    assert "removed the badge 'Open in Colab'" in listed and "linked https://images.example/chart.png instead" in listed
    # An inline image is saved as a file named by its content; the report gives its size, not its payload.
    inline = f"inline-{hashlib.sha256(bytes(3000)).hexdigest()[:12]}.png"
    assert f"saved data:image/png (4,022 characters) as images/{inline}" in listed and "AAAA" not in listed
    assert f"![a dot](images/{inline})" in text and (srcdir / "docs/ported/images" / inline).read_bytes() == bytes(3000)
    assert max(map(len, listed.splitlines())) < 200
    assert "![A single grey pixel](images/pixel.png)" in text and (srcdir / "docs/ported/images/pixel.png").is_file()
    assert "<center>" not in text and "<img" not in text and "<!--* freshness: reviewed *-->" in text
    assert "{func}`jax.jit`" in text and "{func}`lax.cond <jax.lax.cond>`" in text
    assert "a section there" in text and "only-there" not in text
    assert "[notebook](notebooks/walkthrough)" in text  # a page ported with it still resolves
    assert "{doc}" not in text and "the other guide" in text
    assert text.startswith("---\norphan: true\n")
    assert "kept, without its links.\nA line break" in text and "<br" not in text
    graph = (srcdir / "docs/ported/images/graph.svg").read_text(encoding="utf-8")
    assert graph.count("<rect") == 2 and "<a" not in graph and "pprof.example" not in graph
    assert "removed from images/graph.svg: 2 × a link <a>" in listed


def test_the_ported_site_builds_with_every_promise(site):
    rows = json.loads((site.outdir / "execution.json").read_text(encoding="utf-8"))
    for name in ("docs/ported/guide", "docs/ported/notebooks/walkthrough"):
        assert rows[name]["succeeded"] and rows[name]["kind"] == "page"
        stamp = site.html(f"{name}.html").select_one("article .page-header .run-stamp").get_text(" ", strip=True)
        assert stamp.startswith("Executed by this build on CPU at ")


def test_an_ipynb_page_runs_its_cells_and_shows_them(site):
    article = site.html("docs/ported/notebooks/walkthrough.html").select_one("article")
    assert "total: 10" in article.get_text()
    assert article.select_one('a[href$="guide.html"]') is not None


def test_an_image_pasted_into_a_notebook_cell_is_shown(site):
    """A cell attachment, which myst-nb does not read: the build shows it as a data: address in the page."""
    (image,) = site.html("docs/ported/notebooks/walkthrough.html").select("article img[alt='A grey pixel']")
    assert image["src"].startswith("data:image/png;base64,iVBORw0KGgo")


def test_stderr_on_a_page_from_elsewhere_is_shown_and_listed_as_a_warning(site):
    guide = site.html("docs/ported/guide.html").select_one("article").get_text()
    assert "this guide warns on purpose" in guide and "warned" in guide
    # The warning names the cell as an error does, not the file ipykernel compiled it to on this machine.
    assert "<cell>:3: UserWarning: this guide warns on purpose" in guide and "ipykernel_" not in guide
    rows = json.loads((site.outdir / "execution.json").read_text(encoding="utf-8"))
    (warning,) = rows["docs/ported/guide"]["warnings"]
    assert "UserWarning: this guide warns on purpose" in warning["stderr"]
    text = (site.srcdir / "docs" / "ported" / "guide.md").read_text(encoding="utf-8").splitlines()
    assert "warnings.warn" in text[warning["line"] - 1]  # at the statement that warned
    report = site.html("docs/execution-report.html").get_text()
    assert f"stderr shown at line {warning['line']}" in report


def test_a_cell_tagged_skip_execution_is_shown_and_said_not_to_run_on_the_page_and_in_the_report(site):
    """myst-nb's tag keeps its meaning, and a reader is not left to wonder why the cell shows no output."""
    text = (site.srcdir / "docs" / "ported" / "guide.md").read_text(encoding="utf-8").splitlines()
    line = text.index(":tags: [skip-execution]")  # the fence is the line above it, counted from 1
    assert text[line - 1] == "```{code-cell}"
    rows = json.loads((site.outdir / "execution.json").read_text(encoding="utf-8"))
    assert rows["docs/ported/guide"]["not_run"] == [line] and rows["docs/ported/notebooks/walkthrough"]["not_run"] == []
    cells = site.html("docs/ported/guide.html").select("article div.cell")
    said = [cell.select_one("p.cell-not-run") for cell in cells]
    assert [bool(note) for note in said] == [False, False, True, False, False, False]
    assert "shown, never run" in cells[2].get_text() and not cells[2].select("div.cell_output")
    assert said[2].get_text() == "Not run by this build: the cell is tagged skip-execution."
    report = site.html("docs/execution-report.html").get_text()
    assert f"not run (skip-execution): the cell at {line}" in report


def test_jax_names_link_to_the_pinned_api_documentation(site):
    from importlib.metadata import version

    links = [a["href"] for a in site.html("docs/ported/guide.html").select("article a[href]")]
    base = f"https://docs.jax.dev/en/jax-v{version('jax')}/_autosummary/"
    assert f"{base}jax.jit.html" in links and f"{base}jax.lax.cond.html" in links


def test_eqnarray_renders_and_no_page_loads_from_outside(site):
    page = site.html("docs/ported/guide.html")
    (table,) = page.select("article math mtable")
    assert len(table.find_all("mtr")) == 2
    sources = [tag.get("src", "") for tag in page.find_all(["img", "script", "iframe"])]
    assert sources and not [src for src in sources if src.startswith(("http:", "https:", "//"))]


@pytest.fixture(scope="module")
def chromium_page(site):
    """A Chromium page, and the address of the ported site served over HTTP, with what the page asked for."""
    import functools
    import http.server
    import threading

    # The browser tests' own rules: skipped without Chromium or Playwright, failed instead when CI is set.
    from test_browser import CHROMIUM_ARGS, PLAYWRIGHT_IMPORT_ERROR, find_chromium, sync_playwright, unavailable

    if sync_playwright is None:
        unavailable(f"Playwright is not installed: {PLAYWRIGHT_IMPORT_ERROR}")
    executable = find_chromium()
    if executable is None:
        unavailable("Chromium not found at /usr/bin/chromium or as `chromium` on PATH")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site.outdir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    seen = {"requests": [], "failures": [], "errors": []}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.on("request", lambda request: seen["requests"].append(request.url))
            page.on("requestfailed", lambda request: seen["failures"].append(request.url))
            page.on("console", lambda message: seen["errors"].append(message.text) if message.type == "error" else None)
            yield page, base, seen
            browser.close()
    finally:
        server.shutdown()


def test_a_file_the_code_reads_beside_the_page_comes_with_it_and_is_read_there(ported, site):
    """The kernel runs in a scratch folder; the file is copied in, so open("data/counts.txt") works as written."""
    _, pages = ported
    assert "code: copied data/counts.txt, which the page's code reads" in changes(pages, "guide")
    assert (site.srcdir / "docs" / "ported" / "data" / "counts.txt").is_file()
    assert "counts: ['3', '1', '4']" in site.html("docs/ported/guide.html").select_one("article").get_text()


def test_the_notebook_nb_download_offers_is_the_page_s_without_the_build_s_cells_kernel_or_paths(site):
    """myst-nb's {nb-download} copies the notebook it executed: here, the course's hidden cells and kernel."""
    (link,) = site.html("docs/ported/guide.html").select("article a.download[href$='guide.ipynb']")
    path = site.outdir / "docs" / "ported" / link["href"]
    text = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(text, as_version=4)
    assert notebook.metadata.kernelspec.name == "python3"
    written = (site.srcdir / "docs" / "ported" / "guide.md").read_text(encoding="utf-8")
    sources = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert len(sources) == written.count("```{code-cell}") and all(source in written for source in sources)
    assert "jaxcourse" not in text and str(site.srcdir) not in text and "source_map" not in text
    (warned,) = [cell for cell in notebook.cells if "warnings.warn" in cell.source]
    assert [output.get("text") for output in warned.outputs if output.get("name") == "stdout"] == ["warned\n"]
    (stderr,) = [output.text for output in warned.outputs if output.get("name") == "stderr"]
    assert stderr.startswith("<cell>:3: UserWarning: this guide warns on purpose")


def test_a_labelled_equation_is_numbered_and_referenced_by_its_number(site):
    """sphinx-exercise turns numfig on, which numbers equations only on pages in a table of contents."""
    page = site.html("docs/ported/guide.html")
    (number,) = page.select("article div.math-display span.eqno")
    assert number.get_text(strip=True).startswith("(1)")
    (reference,) = page.select('article a.reference[href="#equation-guide-line"]')
    assert reference.get_text() == "(1)"


def test_no_ported_page_makes_a_request_outside_the_site(chromium_page):
    """In Chromium, over HTTP: every request a ported page makes goes to the site itself, and none fails."""
    page, base, seen = chromium_page
    for name in ("docs/ported/guide.html", "docs/ported/notebooks/walkthrough.html"):
        assert page.goto(base + name, wait_until="networkidle").status == 200
    requests = seen["requests"]
    assert requests and all(url.startswith(base) or url.startswith("data:") for url in requests), requests
    assert not seen["failures"] and not seen["errors"], seen


def test_hide_input_and_scroll_output_look_as_myst_nb_draws_them(chromium_page):
    """The site leaves out myst-nb's stylesheet; its own must still give the standard tags their meaning."""
    from playwright.sync_api import expect

    page, base, _ = chromium_page
    page.goto(base + "docs/ported/guide.html", wait_until="networkidle")
    hidden = page.locator("div.cell.tag_hide-input details.hide")
    code = hidden.get_by_text("the code of this cell starts hidden")
    # Closed: one title, the one that says what a click does; the code is not shown.
    expect(hidden.locator("summary")).to_have_text("Show code cell source", use_inner_text=True)
    expect(code).to_be_hidden()
    hidden.locator("summary").click()
    expect(hidden.locator("summary")).to_have_text("Hide code cell source", use_inner_text=True)
    expect(code).to_be_visible()
    # scroll-output: 60 lines in a box of 24em that scrolls, rather than a page-long column.
    box = page.locator("div.cell.tag_scroll-output div.cell_output")
    sizes = box.evaluate("e => [e.clientHeight, e.scrollHeight, getComputedStyle(e).overflowY]")
    font_size = box.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert sizes[0] <= 24 * font_size + 1 and sizes[1] > 2 * sizes[0] and sizes[2] == "auto", sizes
