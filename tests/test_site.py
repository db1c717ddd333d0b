"""The course site, built once from every lesson, checked as HTML."""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import re
import xml.etree.ElementTree as ET

import pytest
import yaml
from conftest import LESSON_FILES, ROOT

LESSON = "transforms-04"
PAGE = f"lessons/{LESSON}.html"
SVG = "{http://www.w3.org/2000/svg}"

# The seed page's parts, in the seed's order (headings as the page shows them).
SEED_SECTIONS = [
    "Compile a function with jit",
    "What you will be able to do",
    "The problem",
    "The idea",
    "Separate changing data from preparing a program",
    "Pause and reason",
    "Separate the work hidden in one call",
    "Check values before timing",
    "Wait for the quantity you are timing",
    "Use repetitions and report a distribution",
    "Compile the computation you intend to repeat",
    "Decide when compilation is worth its setup",
    "Step 1: Set up imports and input tensors",
    "Step 2: Apply the core JAX transformation",
    "Step 3: Verify shapes and numerical invariants",
    "Run the example",
    "Compilation preserves the result",
    "Read the figure",
    "Connect it to the computation",
    "Recorded reference execution",
    "Derive predictions and gradients outside the transform",
    "Collect a synchronized latency sample",
    "Make it yours",
    "Check that a new value remains runtime data",
    "Build a report whose timing claim can be checked",
    "Check your understanding",
    "Diagnose the result",
    "Carry forward",
    "Keep your evidence",
    "Primary references",
]


def front_matter(path):
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---")[1])["lesson"]


@pytest.fixture(scope="module")
def page(course_site):
    return course_site.html(PAGE)


def headings(soup):
    return [
        tag.get_text(" ", strip=True).rstrip("¶#").strip() for tag in soup.select("article h1, article h2, article h3")
    ]


def test_every_seed_section_is_present_in_order(page):
    found = headings(page)
    positions = [found.index(title) for title in SEED_SECTIONS]
    assert positions == sorted(positions), found


def test_header_shows_phase_minutes_and_device(page):
    meta = front_matter(ROOT / "lessons" / f"{LESSON}.md")
    header = page.select_one(".lesson-header .lesson-meta").get_text(strip=True)
    assert (
        header
        == f"Phase {meta['phase']:02d}: {meta['phase_title']} · about {meta['minutes']} minutes · {meta['device']}"
    )


def stamp_fields(page):
    text = page.select_one(".lesson-header .run-stamp").get_text(" ", strip=True)
    match = re.search(
        r"on (?P<backend>\w+) at (?P<time>[\d-]+ [\d:]+) UTC · JAX (?P<jax>\S+) · "
        r"jaxlib (?P<jaxlib>\S+) · Python (?P<python>\S+)",
        text,
    )
    assert match, text
    return match.groupdict()


def test_stamp_versions_are_the_installed_ones(page):
    stamp = stamp_fields(page)
    assert stamp["jax"] == importlib.metadata.version("jax")
    assert stamp["jaxlib"] == importlib.metadata.version("jaxlib")
    assert stamp["backend"] == "CPU"  # once, not "CPU (cpu)"


def test_stamp_time_lies_within_the_build(course_site, page):
    stamp = stamp_fields(page)
    ran = datetime.datetime.strptime(stamp["time"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.UTC)
    assert int(course_site.started) <= ran.timestamp() <= course_site.finished


def test_the_stamp_sits_under_the_title(page):
    header = page.select_one(".lesson-header")
    assert header.find_previous(["h1", "h2"]).get_text(strip=True).rstrip("¶#") == "Compile a function with jit"


def transcript(page):
    return page.select_one(".recorded-transcript pre").get_text()


def test_recorded_execution_stamp_and_transcript(page, course_site):
    stamp = stamp_fields(page)
    summary = page.select_one(".recorded-run .admonition-title").get_text(strip=True)
    lines = transcript(page).strip().splitlines()
    assert summary == (
        f"Transcript: CPU run at {stamp['time']} UTC · JAX {stamp['jax']} · {len(lines)} printed lines, "
        f"ending with PASS: {LESSON}"
    )
    assert lines[-1] == f"PASS: {LESSON}"
    assert lines[0].startswith("Loss: 0.46")
    order = [
        "Loss:",
        "First/repeat seconds:",
        "eager median",
        "compiled median",
        "backend / shapes / dtype: cpu",
        "compiled value-and-grad median seconds:",
        "PASS:",
    ]
    positions = [next(i for i, line in enumerate(lines) if line.startswith(prefix)) for prefix in order]
    assert positions == sorted(positions)


def test_transcript_is_what_the_cells_printed(page):
    printed = "".join(block.get_text() for block in page.select("div.cell_output .output pre"))
    assert transcript(page) == printed + f"PASS: {LESSON}\n"


def test_hidden_course_cells_do_not_show(page):
    assert "jaxcourse" not in page.select_one("article").get_text()
    assert "save_figure" not in page.select_one("article").get_text()


def bar_heights(svg_path):
    root = ET.parse(svg_path).getroot()
    assert root.tag == f"{SVG}svg"
    heights = []
    for group in root.iter(f"{SVG}g"):
        if re.fullmatch(r"bar-0-\d+", group.get("id", "")):
            path = group.find(f"{SVG}path")
            ys = [float(value) for value in re.findall(r"[ML] [-\d.]+ ([-\d.]+)", path.get("d"))]
            heights.append(round(max(ys) - min(ys), 3))
    return heights


def test_figure_is_a_valid_svg_with_three_equal_bars(course_site):
    svg = course_site.srcdir / "figures" / f"{LESSON}.svg"
    heights = bar_heights(svg)
    assert len(heights) == 3 and len(set(heights)) == 1 and heights[0] > 0
    text = svg.read_text(encoding="utf-8")
    # Text as text, which a reader can zoom and have read aloud, in a font named with its fallbacks.
    assert "<text" in text and "DejaVuSans" not in text and "text{font-family: 'DejaVu Sans'" in text
    assert "<dc:date>" not in text


@pytest.mark.parametrize("lesson_path", LESSON_FILES, ids=lambda path: path.stem)
def test_built_figures_match_the_committed_ones(course_site, lesson_path):
    """Same data, same bytes: rebuilding never churns figures/."""
    built = sorted((course_site.srcdir / "figures").glob(f"{lesson_path.stem}*.svg"))
    assert built
    for figure in built:
        assert figure.read_bytes() == (ROOT / "figures" / figure.name).read_bytes(), figure.name


def test_figure_is_embedded_with_alt_text(course_site, page):
    images = [img for img in page.select("figure img") if img["src"].endswith(f"{LESSON}.svg")]
    assert len(images) == 1
    assert len(images[0]["alt"]) > 40
    assert (course_site.outdir / "lessons" / images[0]["src"]).resolve().exists()


def test_solutions_are_executed_and_collapsed(page):
    source = (ROOT / "lessons" / f"{LESSON}.md").read_text(encoding="utf-8")
    solutions = page.select("div.solution")
    assert len(solutions) == source.count("{solution-start}") == 3
    for solution in solutions:
        assert "dropdown" in solution["class"]
        assert solution.select("div.cell_input"), "a reference solution holds an executed cell"


def test_scaffolds_are_shown_but_not_executed(page):
    scaffolds = [block for block in page.select("div.highlight-python pre") if "TODO" in block.get_text()]
    assert len(scaffolds) == 3
    for block in scaffolds:
        assert not block.find_parent("div", class_="cell")


def test_hints_and_answers_are_collapsed(page):
    titles = {
        node.select_one(".admonition-title").get_text(strip=True): node["class"]
        for node in page.select("div.admonition")
        if node.select_one(".admonition-title")
    }
    assert "dropdown" in titles["Answer and explanation"]
    assert "dropdown" in titles["Compare your reasoning"]
    assert len([node for node in page.select("div.hint.admonition") if "dropdown" in node["class"]]) == 2
    assert page.find("script", src=re.compile(r"togglebutton\.js"))


def test_copy_buttons_are_wired_for_input_cells(page):
    assert page.find("script", src=re.compile(r"copybutton\.js"))


def test_math_is_rendered_without_scripts(page):
    assert page.select("math")
    assert not page.find("script", src=re.compile("mathjax", re.I))


def test_home_page_lists_every_lesson_by_phase(course_site):
    home = course_site.html("docs/index.html")
    metas = sorted((front_matter(path) for path in LESSON_FILES), key=lambda m: (m["phase"], m["order"]))
    listed = [link.get_text(strip=True) for link in home.select(".lesson-list a")]
    assert listed == [meta["title"] for meta in metas]
    # Each phase is a section under "Lessons": its heading is one level below, in the page's outline.
    phases = [h.get_text(strip=True).rstrip("¶") for h in home.select("section#lessons > section.lesson-phase > h3")]
    assert phases == sorted({f"Phase {m['phase']:02d}: {m['phase_title']}" for m in metas})
    assert not home.select(".lesson-phase .rubric")


def test_the_home_page_starts_with_the_first_lesson_and_the_phases_from_the_front_matter(course_site):
    home = course_site.html("docs/index.html")
    metas = sorted((front_matter(path) for path in LESSON_FILES), key=lambda m: (m["phase"], m["order"]))
    start = home.select_one("article .start-here")
    assert start is not None and start.find_previous(["h1", "h2"]).get_text(strip=True).rstrip("¶#") == "JAX, executed"
    assert start.select_one(".start-first a").get_text(strip=True) == metas[0]["title"]
    phases = sorted({(m["phase"], m["phase_title"]) for m in metas})
    items = [item.get_text(" ", strip=True) for item in start.select("ul.start-phases li")]
    assert len(items) == len(phases)
    for (phase, title), item in zip(phases, items, strict=True):
        members = [m for m in metas if m["phase"] == phase]
        minutes = sum(m["minutes"] for m in members)
        hours, rest = divmod(minutes, 60)
        assert item.startswith(f"Phase {phase:02d}: {title} · {len(members)} lesson"), item
        assert f"about {hours} h" in item and (f"{rest} min" in item if rest else True), item
    links = [a["href"] for a in start.select("ul.start-phases a")]
    assert all(home.select_one(href) is not None for href in links), links  # each leads to its heading


def test_root_index_leads_to_the_home_page(course_site):
    redirect = (course_site.outdir / "index.html").read_text(encoding="utf-8")
    assert "url=docs/index.html" in redirect


def test_every_page_links_the_site_s_icon(course_site):
    """Without a link a browser asks for /favicon.ico, which the site does not have: a 404 in its log."""
    for path in sorted(course_site.outdir.rglob("*.html")):
        page = course_site.html(path.relative_to(course_site.outdir).as_posix())
        icons = [link for link in page.find_all("link") if "icon" in (link.get("rel") or [])]
        assert icons, f"{path.relative_to(course_site.outdir)} links no icon"
        href = icons[0]["href"]
        if not href.startswith("data:"):
            assert (path.parent / href).resolve().is_file(), (path, href)


def test_search_index_finds_the_lesson_for_block_until_ready(course_site):
    from sphinx.search.en import SearchEnglish

    raw = (course_site.outdir / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(raw[raw.index("(") + 1 : raw.rindex(")")])
    term = SearchEnglish({}).stem("block_until_ready")
    hits = index["terms"][term]
    hits = hits if isinstance(hits, list) else [hits]
    assert index["docnames"].index(f"lessons/{LESSON}") in hits
    assert (course_site.outdir / "search.html").exists()


def test_theme_is_furo(page):
    assert page.find("link", href=re.compile(r"furo.*\.css"))


def test_execution_report_has_a_passing_row_per_lesson(course_site):
    report = course_site.html("docs/execution-report.html")
    rows = report.select("table.execution-report tbody tr")
    ids = sorted(path.stem for path in LESSON_FILES)
    assert sorted(row.select("td")[0].get_text(strip=True) for row in rows) == ids
    for row in rows:
        lesson, status, runtime, jax_version, ran_at, recording = (td.get_text(strip=True) for td in row.select("td"))
        assert status == "passed"
        assert float(runtime) > 0
        assert jax_version == importlib.metadata.version("jax")
        ran = datetime.datetime.strptime(ran_at, "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=datetime.UTC).timestamp()
        assert int(course_site.started) <= ran <= course_site.finished
        assert recording == "fresh"


def test_each_lesson_links_to_the_previous_and_next_lesson(course_site):
    ordered = [
        path.stem for path in sorted(LESSON_FILES, key=lambda p: (front_matter(p)["phase"], front_matter(p)["order"]))
    ]
    for index, lesson_id in enumerate(ordered):
        page = course_site.html(f"lessons/{lesson_id}.html")
        previous = page.select_one("a.prev-page")["href"]
        following = page.select_one("a.next-page")
        if index > 0:
            assert previous == f"{ordered[index - 1]}.html"
        else:
            assert previous == "../docs/index.html"
        if index + 1 < len(ordered):
            assert following["href"] == f"{ordered[index + 1]}.html"


def test_home_page_shows_minutes_and_device_of_each_lesson(course_site):
    home = course_site.html("docs/index.html")
    items = {
        item.select_one("a").get_text(strip=True): item.get_text(" ", strip=True)
        for item in home.select(".lesson-list li")
    }
    for path in LESSON_FILES:
        meta = front_matter(path)
        assert f"about {meta['minutes']} minutes · {meta['device']}" in items[meta["title"]]


def test_execution_json_matches_the_report(course_site):
    data = json.loads((course_site.outdir / "execution.json").read_text(encoding="utf-8"))
    assert sorted(data) == sorted(path.stem for path in LESSON_FILES)
    for lesson_id, row in data.items():
        assert row["succeeded"] and row["runtime_seconds"] > 0 and row["stamp"]["page"] == lesson_id
        assert row["docname"] == f"lessons/{lesson_id}" and row["kind"] == "lesson"


def test_a_passing_build_prints_nothing(course_site):
    # -q leaves only warnings and errors; kernels log errors only (kernels/jaxcourse).
    assert course_site.output.strip() == ""


def test_sidebar_and_page_captions_carry_a_heading_level(page):
    """furo renders the sidebar into a private context key; the accessibility fix must still reach it."""
    captions = page.select('p.caption[role="heading"]')
    assert page.select_one(".sidebar-tree p.caption"), "furo's sidebar has no caption: its markup changed"
    assert captions and all(caption.get("aria-level") == "2" for caption in captions)


def test_scrolling_code_blocks_can_take_keyboard_focus(page):
    blocks = page.select("article pre")
    assert blocks and all(block.get("tabindex") == "0" for block in blocks)


def test_wide_equations_and_tables_scroll_in_a_named_box_the_keyboard_reaches(course_site):
    for name in ("transforms-04", "scale-04"):
        page = course_site.html(f"lessons/{name}.html")
        boxes = page.select("div.math-wrapper, div.table-wrapper")
        assert boxes, name
        for box in boxes:
            assert box.get("tabindex") == "0" and box.get("role") == "group" and box.get("aria-label"), box.attrs


def test_the_template_is_not_a_page_of_the_site(course_site):
    assert not (course_site.outdir / "lessons" / "_template.html").exists()


def test_the_code_spans_pages_leave_out_are_drawn_as_plain_code_text_in_both_themes(course_site):
    """jaxcourse.output.pagestyles drops the spans of some Pygments tokens: in the built stylesheet they must
    have the colour of plain code, in the light and the dark theme (whitespace has no visible colour)."""
    from jaxcourse.output.pagestyles import PLAIN_TOKEN_CLASSES

    css = (course_site.outdir / "_static" / "pygments.css").read_text(encoding="utf-8")
    for theme in ("", 'body[data-theme="dark"] '):
        base = re.search(r"^" + re.escape(theme) + r"\.highlight \{[^}]*color: (#\w+)", css, re.M)[1]
        for token in PLAIN_TOKEN_CLASSES:
            if token == "w":
                continue
            rule = re.search(r"^" + re.escape(theme) + r"\.highlight \." + token + r" \{ ([^}]*) \}", css, re.M)
            assert rule is None or rule[1].strip() == f"color: {base}", (theme, token, rule and rule[1], base)
    page = (course_site.outdir / "lessons" / f"{LESSON}.html").read_text(encoding="utf-8")
    assert '<span class="n">' not in page and '<span class="o">' not in page and '<span class="k">' in page


def test_search_quotes_each_page_s_own_prose_from_one_file_the_search_page_alone_loads(course_site):
    raw = (course_site.outdir / "_static" / "course-search.js").read_text(encoding="utf-8")
    data = json.loads(raw[raw.index("=") + 1 : raw.index(";\n")])
    lessons = sorted(docname for docname in data if docname.startswith("lessons/"))
    assert lessons == sorted(f"lessons/{path.stem}" for path in LESSON_FILES)
    page = data[f"lessons/{LESSON}"]
    # "What you will be able to do", first of all
    assert page["objectives"].startswith("Explain tracing, compilation, dispatch")
    assert page["prose"] and len(page["prose"]) <= 1200
    for text in (page["objectives"], page["prose"]):
        assert "Executed by this build" not in text and "UTC" not in text and "PASS:" not in text
        assert "import jax" not in text and "Compare your reasoning" not in text
    search = course_site.html("search.html")
    assert search.find("script", src=re.compile(r"course-search\.js"))
    assert not course_site.html(PAGE).find("script", src=re.compile(r"course-search\.js"))
