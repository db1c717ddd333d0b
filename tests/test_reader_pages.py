"""What readers get besides the lesson text: downloads, offline pages, a 404 page, safe outputs."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET

import nbformat
import pytest
from conftest import LESSON_FILES, ROOT, build, make_site
from tiny import code_cell, lesson

LESSON_IDS = [path.stem for path in LESSON_FILES]
# The starter notebook checks answers: run as downloaded, every check fails; with each scaffold replaced by
# the lesson's own solution code, every check passes and nothing else raises.
CHECKED_STARTERS = ["foundations-02", "transforms-04", "transforms-08", "scale-03"]
SVG = "{http://www.w3.org/2000/svg}"


def download(course_site, name):
    return course_site.outdir / "_downloads" / "lessons" / name


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_lesson_page_links_its_three_downloads_and_colab(course_site, lesson_id):
    page = course_site.html(f"lessons/{lesson_id}.html")
    links = page.select(".lesson-header .lesson-downloads a.download")
    assert [link.get_text() for link in links] == ["executed notebook", "MyST source", "starter notebook (exercises)"]
    for link in links:
        assert (course_site.outdir / "lessons" / link["href"]).resolve().is_file()
    colab = page.select_one(".lesson-header .lesson-downloads a.colab")
    repository, branch = re.fullmatch(r"(.+)@(.+)", conf_value("course_notebooks_on_github")).groups()
    assert colab["href"] == (
        f"https://colab.research.google.com/github/{repository}/blob/{branch}/lessons/{lesson_id}.ipynb"
    )
    # The notebook Colab opens is the starter notebook, written where the Pages workflow publishes from.
    published = course_site.srcdir / "_build" / "notebooks" / "lessons" / f"{lesson_id}.ipynb"
    assert published.read_bytes() == download(course_site, f"{lesson_id}-exercises.ipynb").read_bytes()


def conf_value(name: str) -> str:
    import ast

    tree = ast.parse((ROOT / "conf.py").read_text(encoding="utf-8"))
    return next(node.value.value for node in tree.body if isinstance(node, ast.Assign) and node.targets[0].id == name)


#: What MyST looks like; none of it may reach a notebook, where it would show as raw text.
RAW_MYST = re.compile(
    r"\{(figure|exercise|hint|solution-start|solution-end|doc|ref|recorded-run|admonition|code-cell)\}"
)


def markdown_of(notebook) -> str:
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_the_executed_notebook_is_a_notebook_not_myst(course_site, lesson_id):
    notebook = nbformat.read(download(course_site, f"{lesson_id}.ipynb"), as_version=4)
    markdown = markdown_of(notebook)
    assert not RAW_MYST.search(markdown), RAW_MYST.search(markdown)
    assert not re.search(r"^\s*:(class|label|alt|nonumber|name|width):", markdown, re.M)  # directive options
    first = notebook.cells[0].source
    page = course_site.html(f"lessons/{lesson_id}.html")
    stamp = page.select_one(".run-stamp").get_text(" ", strip=True)
    assert re.search(r"at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)", first)[1] in stamp  # the run stamp first
    figures = [cell for cell in notebook.cells if cell.get("attachments")]
    assert figures and "image/svg+xml" in next(iter(figures[0].attachments.values()))
    assert re.search(r"!\[.+\]\(attachment:" + re.escape(lesson_id), figures[0].source)  # with its alt text
    base_url = conf_value("html_baseurl")
    assert re.findall(r"\]\((https?://[^)]+)\)", markdown) and not re.search(r"\]\((doc|ref):", markdown)
    assert f"]({base_url}lessons/{lesson_id}.html)" in markdown


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_the_executed_notebook_sets_the_solutions_after_the_exercises(course_site, lesson_id):
    notebook = nbformat.read(download(course_site, f"{lesson_id}.ipynb"), as_version=4)
    headings = [line for line in markdown_of(notebook).splitlines() if line.startswith("#")]
    exercises = [i for i, h in enumerate(headings) if h.startswith("### Exercise:")]
    solutions = [i for i, h in enumerate(headings) if h.startswith("### Solution:")]
    assert [headings[i] for i in exercises] == [
        f"### Exercise: {level}" for level in ("Foundation", "Practice", "Challenge")
    ]
    assert len(solutions) == 3 and min(solutions) > max(exercises)
    assert headings.index("## Solutions") < min(solutions)
    # Hints stay closed until opened, as on the page.
    assert "<details><summary>Hint</summary>" in markdown_of(notebook)


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_executed_notebook_holds_this_builds_outputs_and_no_build_cells(course_site, lesson_id):
    notebook = nbformat.read(download(course_site, f"{lesson_id}.ipynb"), as_version=4)
    printed = "".join(
        output.get("text") or "".join(line + "\n" for line in output.get("traceback", []))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type in ("stream", "error")
    )
    page = course_site.html(f"lessons/{lesson_id}.html")
    transcript = page.select_one(".recorded-transcript pre").get_text()
    for line in printed.splitlines():
        assert line in transcript
    assert not any("jaxcourse" in cell.source or "save_figure" in cell.source for cell in notebook.cells)
    assert notebook.metadata.kernelspec.name == "python3"  # the reader's kernel, not the build's


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_myst_source_is_the_lesson_file(course_site, lesson_id):
    assert download(course_site, f"{lesson_id}.md").read_bytes() == (ROOT / "lessons" / f"{lesson_id}.md").read_bytes()


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_starter_notebook_has_scaffolds_and_no_solutions(course_site, lesson_id):
    starter = nbformat.read(download(course_site, f"{lesson_id}-exercises.ipynb"), as_version=4)
    headings = [cell.source.splitlines()[0] for cell in starter.cells if cell.cell_type == "markdown"]
    assert [h for h in headings if h.startswith("## Exercise:")] == [
        "## Exercise: Foundation",
        "## Exercise: Practice",
        "## Exercise: Challenge",
    ]
    assert not RAW_MYST.search(markdown_of(starter))
    code = [cell.source for cell in starter.cells if cell.cell_type == "code"]
    assert sum("TODO" in source for source in code) == 3
    page = course_site.html(f"lessons/{lesson_id}.html")
    solutions = {pre.get_text().strip() for pre in page.select("div.solution div.cell_input pre")}
    assert solutions and not solutions & {source.strip() for source in code}
    assert all(not cell.outputs for cell in starter.cells if cell.cell_type == "code")


def run_until_first_scaffold(notebook, folder):
    """Execute a starter notebook with nbclient up to (not including) its first exercise scaffold."""
    from nbclient import NotebookClient

    first_exercise = next(i for i, cell in enumerate(notebook.cells) if cell.source.startswith("## Exercise:"))
    notebook.cells = notebook.cells[:first_exercise]
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    return notebook


def assert_ran_to_first_exercise(notebook) -> None:
    """Its cells before the first exercise kept their tags: only a cell that shows an error on purpose raised."""
    exercises = [i for i, cell in enumerate(notebook.cells) if cell.source.startswith("## Exercise:")]
    before = notebook.cells[: exercises[0]] if exercises else notebook.cells  # a run may have stopped there
    raised = [cell for cell in before for output in cell.get("outputs", []) if output.output_type == "error"]
    assert all("raises-exception" in cell.metadata.get("tags", []) for cell in raised)
    version = next(cell for cell in before if cell.cell_type == "code" and "WRITTEN_FOR" in cell.source)
    assert "the version this lesson was written for" in version.outputs[0].text


# The lessons whose whole starter notebook runs below (CHECKED_STARTERS) are checked there, from that run.
@pytest.mark.parametrize("lesson_id", [lesson_id for lesson_id in LESSON_IDS if lesson_id not in CHECKED_STARTERS])
def test_the_starter_notebook_runs_to_its_first_exercise(course_site, lesson_id, tmp_path):
    notebook = nbformat.read(download(course_site, f"{lesson_id}-exercises.ipynb"), as_version=4)
    assert_ran_to_first_exercise(run_until_first_scaffold(notebook, tmp_path))


def test_executed_notebook_runs_outside_the_site(course_site, tmp_path):
    from nbclient import NotebookClient

    notebook = nbformat.read(download(course_site, "transforms-04.ipynb"), as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    printed = [output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", [])]
    assert any(text.startswith("Loss: 0.46") for text in printed)


def html_pages(course_site):
    return sorted(course_site.outdir.rglob("*.html"))


def test_no_page_loads_anything_from_outside_the_site(course_site):
    outside = re.compile(r"^(https?:)?//", re.I)
    from bs4 import BeautifulSoup

    for path in html_pages(course_site):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        loads = [tag.get("src") for tag in soup.find_all(["script", "img", "iframe", "source", "video", "audio"])]
        loads += [
            tag.get("href")
            for tag in soup.find_all("link")
            if "stylesheet" in (tag.get("rel") or [])
            or "preload" in (tag.get("rel") or [])
            or "icon" in (tag.get("rel") or [])
        ]
        # An inline style loads too (a background image, a font): no url() in any style attribute leaves the site.
        loads += [
            address
            for tag in soup.find_all(style=True)
            for address in re.findall(r"url\(\s*['\"]?([^'\")]+)", tag["style"], re.I)
        ]
        external = [url for url in loads if url and outside.match(url.strip())]
        assert not external, f"{path.relative_to(course_site.outdir)} loads {external}"
    for css in (course_site.outdir / "_static").rglob("*.css"):
        text = css.read_text(encoding="utf-8", errors="replace")
        assert not re.search(r"@import\s+url\(\s*['\"]?(https?:)?//|url\(\s*['\"]?(https?:)?//", text), css.name


def test_not_found_page_is_self_contained(course_site):
    page = (course_site.outdir / "404.html").read_text(encoding="utf-8")
    assert "Page not found" in page
    # Served at any depth, it links the home page by its full address (conf.py's html_baseurl).
    assert f'href="{conf_value("html_baseurl")}docs/index.html"' in page
    assert "<script" not in page
    # Served at any depth, it links nothing but its inline icon.
    icon = re.search(r'<link rel="icon" href="data:image/svg\+xml;base64,([^"]+)">', page)
    assert icon and re.findall(r"<link[^>]*>", page) == [icon[0]]
    assert base64.b64decode(icon[1]) == (course_site.outdir / "_static" / "favicon.svg").read_bytes()


def test_pages_workflow_builds_with_the_maintainers_session_and_reports_changes():
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["build"]["steps"]
    runs = [step.get("run", "") for step in steps]
    fetch = next(i for i, run in enumerate(runs) if "recordings.json" in run and "curl" in run)
    build = next(i for i, run in enumerate(runs) if "nox -s docs -- --compare-to _build/published" in run)
    summary = next(i for i, run in enumerate(runs) if "_build/changes.md" in run and "GITHUB_STEP_SUMMARY" in run)
    assert fetch < build < summary
    assert "steps.pages.outputs.base_url" in runs[fetch]  # the published site's own address
    assert steps[-1]["with"]["path"] == "_build/html"


def test_the_site_publishes_its_recordings_for_the_next_comparison(course_site):
    import json

    recordings = json.loads((course_site.outdir / "recordings.json").read_text(encoding="utf-8"))
    assert sorted(recordings["pages"]) == LESSON_IDS
    for lesson_id, entry in recordings["pages"].items():
        assert entry["stamp"]["jax"] and entry["cells"]
        assert all(cell["line"] > 0 for cell in entry["cells"])
        assert entry["figures"], lesson_id


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_figures_come_in_a_light_and_a_dark_version_on_their_page_backgrounds(course_site, lesson_id):
    from jaxcourse.runtime.charts import DARK, LIGHT

    drawn = sorted((course_site.srcdir / "figures").glob(f"{lesson_id}*.svg"))
    light = [svg for svg in drawn if not svg.stem.endswith("-dark")]
    assert light and sorted(svg.with_name(svg.stem + "-dark.svg") for svg in light) == [
        svg for svg in drawn if svg.stem.endswith("-dark")
    ]
    for svg in drawn:
        root = ET.parse(svg).getroot()
        background = next(group for group in root.iter(f"{SVG}g") if group.get("id") == "patch_1")
        style = background.find(f"{SVG}path").get("style")
        colour = DARK["background"] if svg.stem.endswith("-dark") else LIGHT["background"]
        assert f"fill: {colour}" in style and "opacity" not in style, svg.name


@pytest.fixture(scope="module")
def markup_site(tmp_path_factory):
    body = (
        code_cell("print('<b>bold</b> <script>window.hacked = 1</script>')")
        + "\n"
        + code_cell("'<img src=x onerror=alert(1)>'")
    )
    srcdir = make_site(tmp_path_factory.mktemp("markup"), lessons={"prints-markup": lesson("prints-markup", body)})
    result = build(srcdir)
    assert result.returncode == 0, result.output
    return result.html("lessons/prints-markup.html")


def test_printed_markup_shows_as_text(markup_site):
    outputs = markup_site.select("div.cell_output")
    assert "<b>bold</b> <script>window.hacked = 1</script>" in outputs[0].get_text()
    assert not outputs[0].find("b") and not outputs[0].find("script")
    assert "<img src=x onerror=alert(1)>" in outputs[1].get_text()
    assert not outputs[1].find("img")


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_the_transcript_waits_collapsed_until_after_the_questions_it_answers(course_site, lesson_id):
    """The transcript sits before the experiments and exercises; it is a closed dropdown (the
    browser tests check it is hidden on load) under a summary that gives no answer away."""
    page = course_site.html(f"lessons/{lesson_id}.html")
    transcripts = page.select(".recorded-transcript")
    assert len(transcripts) == 1
    box = transcripts[0].find_parent("div", class_="recorded-run")
    assert box is not None and "dropdown" in box["class"]
    summary = box.select_one(".admonition-title").get_text(" ", strip=True)
    assert summary.startswith("Transcript: CPU run ") and summary.endswith(f"ending with PASS: {lesson_id}")
    first_exercise = page.select_one("div.exercise")
    assert first_exercise is not None
    assert box.sourceline < first_exercise.sourceline  # where the seed has it: before the exercises


def solution_code(lesson_id: str) -> dict[str, str]:
    """Each exercise's solution code, from the lesson source: its code cells between the solution markers."""
    from jaxcourse.source import exercisechecks, lessonsource

    source = lessonsource.parse((ROOT / "lessons" / f"{lesson_id}.md").read_text(encoding="utf-8"))
    code = {}
    for exercise in source.fences("exercise"):
        label = exercise.options["label"]
        start, end = exercisechecks.solution_range(source, label)
        code[label] = "\n\n".join(cell.code for cell in source.code_cells() if start < cell.line < end)
    return code


def run_starter(course_site, lesson_id: str, folder, replace_scaffolds: bool):
    from nbclient import NotebookClient

    notebook = nbformat.read(download(course_site, f"{lesson_id}-exercises.ipynb"), as_version=4)
    if replace_scaffolds:
        solutions = solution_code(lesson_id)
        for cell in notebook.cells:
            if "exercise-scaffold" in cell.metadata.get("tags", []):
                cell.source = solutions[cell.metadata["exercise"]]
    NotebookClient(
        notebook,
        timeout=180,
        kernel_name="python3",
        allow_errors=not replace_scaffolds,
        resources={"metadata": {"path": str(folder)}},
    ).execute()
    return notebook


def errors_of(cell) -> list[str]:
    return [output.ename for output in cell.get("outputs", []) if output.output_type == "error"]


@pytest.mark.parametrize("lesson_id", CHECKED_STARTERS)
def test_every_check_fails_on_the_starter_notebook_as_downloaded(course_site, lesson_id, tmp_path):
    notebook = run_starter(course_site, lesson_id, tmp_path, replace_scaffolds=False)
    assert_ran_to_first_exercise(notebook)
    checks = [cell for cell in notebook.cells if "exercise-check" in cell.metadata.get("tags", [])]
    assert len(checks) == 3
    assert [errors_of(cell) for cell in checks] == [["AssertionError"]] * 3
    labels = [cell.metadata["exercise"] for cell in checks]
    scaffolds = [
        cell.metadata["exercise"] for cell in notebook.cells if "exercise-scaffold" in cell.metadata.get("tags", [])
    ]
    assert labels == scaffolds  # each check right after its scaffold


@pytest.mark.parametrize("lesson_id", CHECKED_STARTERS)
def test_every_check_passes_with_the_solutions_in_place_of_the_scaffolds(course_site, lesson_id, tmp_path):
    notebook = run_starter(course_site, lesson_id, tmp_path, replace_scaffolds=True)  # any error would raise
    checks = [cell for cell in notebook.cells if "exercise-check" in cell.metadata.get("tags", [])]
    assert len(checks) == 3 and all(not errors_of(cell) for cell in checks)


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_the_page_shows_each_checks_call_and_not_its_code(course_site, lesson_id):
    page = course_site.html(f"lessons/{lesson_id}.html")
    notes = [p.get_text(" ", strip=True) for p in page.select("article p") if "starter notebook checks" in p.get_text()]
    assert notes == [
        f"The starter notebook checks your answer: after your code, run {level}() ."
        for level in ("check_foundation", "check_practice", "check_challenge")
    ]
    assert "def check_" not in page.select_one("article").get_text()
