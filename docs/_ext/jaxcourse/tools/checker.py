"""The lesson checker: ``python -m jaxcourse.tools.checker [ID | lessons/ID.md ...]``.

Checks each lesson as the build parses it (front matter, anatomy, exercises, figures, cell tags, ruff, code line
length), without building; prints every problem as ``lessons/FILE.md:LINE: message`` and exits 1 if any.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from ..output import rawhtml
from ..source import catalogue, exercisechecks, frontmatter, lessonsource
from ..source.frontmatter import Problem
from ..source.lessonsource import Fence, Heading, LessonSource, Paragraph
from . import plural

LEVELS = ("Foundation", "Practice", "Challenge")
REFERENCE_SITE = "https://docs.jax.dev/"
PREDICT = "**Predict before running:**"
MIN_EXPERIMENTS = 2

#: Cell tags a lesson may use: myst-nb's own, and the course's.
CELL_TAGS = {
    "remove-cell": "myst-nb: the cell runs but is not shown (the figure's save_figure cell)",
    "remove-input": "myst-nb: only the outputs are shown",
    "remove-output": "myst-nb: only the code is shown",
    "remove-stderr": "myst-nb: stderr outputs are not shown",
    "remove-stdout": "myst-nb: stdout outputs are not shown",
    "hide-cell": "myst-nb: the cell is collapsed",
    "hide-input": "myst-nb: the code is collapsed",
    "hide-output": "myst-nb: the outputs are collapsed",
    "raises-exception": "myst-nb: the cell may raise (a lesson promises its error with ':raises: Name' instead)",
    "exercise-check": "the exercise's check, ':exercise: <label>'; the build proves it (see docs/contributing.md)",
}
RETIRED_TAGS = {
    "varies": (
        "the 'varies' tag exempted every output of the cell from the change report; declare only the values "
        "that vary, with a regular expression: ':varies: <pattern>' (see docs/contributing.md)"
    ),
}
#: A cell that reads a clock and prints is a timing, and its outputs vary from run to run.
_CLOCK = re.compile(r"\b(perf_counter|perf_counter_ns|monotonic|process_time|timeit|time\.time)\b")
_PRINTS = re.compile(r"\bprint\(|\bdisplay\(")

Matcher = Callable[[object], bool]


def _text_matches(value: str, exact: str | None, prefix: str | None) -> bool:
    return value == exact if exact is not None else value.startswith(prefix or "")


def heading(level: int, text: str | None = None, prefix: str | None = None) -> Matcher:
    """A heading of ``level``: any, or with exactly ``text``, or starting with ``prefix``."""
    return lambda block: isinstance(block, Heading) and block.level == level and _text_matches(block.text, text, prefix)


def fence(name: str, argument: str | None = None, prefix: str | None = None) -> Matcher:
    """A ``name`` directive: any, or with exactly ``argument``, or one starting with ``prefix``."""
    return lambda block: (
        isinstance(block, Fence)
        and block.is_directive
        and block.name == name
        and _text_matches(block.argument, argument, prefix)
    )


def paragraph(prefix: str) -> Matcher:
    """A paragraph starting with ``prefix``."""
    return lambda block: isinstance(block, Paragraph) and block.text.startswith(prefix)


# The anatomy every lesson follows, in order: (what matches it, what it is).
ANATOMY: list[tuple[Matcher, str]] = [
    (heading(1), "the '# Title' heading"),
    (heading(2, "What you will be able to do"), "'## What you will be able to do'"),
    (heading(2, "The problem"), "'## The problem'"),
    (heading(2, "The idea"), "'## The idea'"),
    (heading(3, "Pause and reason"), "'### Pause and reason' inside a concept section"),
    (fence("admonition", "Compare your reasoning"), "a 'Compare your reasoning' dropdown after the pause"),
    (heading(2, prefix="Step 1: "), "'## Step 1: ...'"),
    (heading(2, "Run the example"), "'## Run the example'"),
    (fence("figure"), "the lesson's figure"),
    (heading(3, "Read the figure"), "'### Read the figure'"),
    (heading(3, "Connect it to the computation"), "'### Connect it to the computation'"),
    (heading(2, "Recorded reference execution"), "'## Recorded reference execution'"),
    (fence("recorded-run"), "the {recorded-run} directive under it"),
    (paragraph(PREDICT), f"an experiment opening with '{PREDICT}'"),
    (fence("exercise", "Foundation"), "the Foundation exercise"),
    (fence("exercise", "Practice"), "the Practice exercise"),
    (fence("exercise", "Challenge"), "the Challenge exercise"),
    (heading(2, "Check your understanding"), "'## Check your understanding'"),
    (fence("admonition", "Answer and explanation"), "an 'Answer and explanation' dropdown"),
    (heading(2, "Diagnose the result"), "'## Diagnose the result'"),
    (heading(2, "Carry forward"), "'## Carry forward'"),
    (heading(2, "Keep your evidence"), "'## Keep your evidence'"),
    (heading(2, "Primary references"), "'## Primary references'"),
]

#: The longest visible code line, in characters: at 1280 px a line this long fits the page's code box, so no
#: code scrolls sideways. Code a reader never sees (a cell tagged remove-cell or remove-input, an exercise's
#: check) is exempt. Outputs are not the checker's to see: the site wraps them (course.css).
CODE_LINE_LIMIT = 88
HIDDEN_CODE_TAGS = ("remove-cell", "remove-input", "exercise-check")
#: Directives that show code as it is written.
CODE_DIRECTIVES = ("code-cell", "code-block", "code", "sourcecode")

# Ruff on lesson cells: notebook code re-imports and redefines by design.
RUFF_LESSON_ARGS = ["--select", "E,F,W", "--ignore", "E402,E501,E731,F811", "--line-length", "120"]


def problem_list(check: Callable[..., Iterator[Problem]]) -> Callable[..., list[Problem]]:
    """A check written as a generator of problems, made to return them as a list."""

    @functools.wraps(check)
    def listed(*args, **kwargs) -> list[Problem]:
        return list(check(*args, **kwargs))

    return listed


def top_level(source: LessonSource) -> list:
    """The blocks outside any directive."""
    return [block for block in source.blocks if block.depth == 0]


@problem_list
def check_anatomy(source: LessonSource) -> Iterator[Problem]:
    """The parts of :data:`ANATOMY` in order, steps numbered 1, 2, 3..., and one title."""
    blocks = top_level(source)
    position, last_line = 0, 1
    for matches, what in ANATOMY:
        hit = next((i for i in range(position, len(blocks)) if matches(blocks[i])), None)
        if hit is not None:
            position, last_line = hit + 1, blocks[hit].line
            continue
        anywhere = next((block for block in blocks if matches(block)), None)
        if anywhere is None:
            # Located at the last part found: the missing part belongs after it.
            yield Problem(last_line, f"missing {what} after this point")
        else:
            yield Problem(anywhere.line, f"{what} is out of order: it must come after line {last_line}")
    steps = [block for block in source.headings() if block.level == 2 and block.text.startswith("Step ")]
    numbers = [int(match[1]) for block in steps if (match := re.match(r"Step (\d+): ", block.text))]
    if numbers and numbers != list(range(1, len(numbers) + 1)):
        yield Problem(steps[0].line, f"steps must be numbered 1, 2, 3...; found {numbers}")
    titles = [block for block in source.headings() if block.level == 1]
    if len(titles) > 1:
        yield Problem(titles[1].line, "a lesson has one '# Title' heading; use '##' for sections")


@problem_list
def check_experiments(source: LessonSource) -> Iterator[Problem]:
    """At least two experiments, each a prediction followed by a cell that runs it."""
    blocks = top_level(source)
    predictions = [i for i, block in enumerate(blocks) if paragraph(PREDICT)(block)]
    for index in predictions:
        section = itertools.takewhile(lambda block: not isinstance(block, Heading), blocks[index + 1 :])
        if not any(fence("code-cell")(block) for block in section):
            yield Problem(blocks[index].line, "this experiment has no {code-cell} before the next heading")
    if 0 < len(predictions) < MIN_EXPERIMENTS:
        yield Problem(
            blocks[predictions[-1]].line, f"a lesson has at least {MIN_EXPERIMENTS} predict-then-run experiments"
        )


@problem_list
def check_exercises(source: LessonSource, lesson_id: str) -> Iterator[Problem]:
    """One exercise per level, each with a label, a scaffold, a check and a collapsed, executed solution."""
    exercises = source.fences("exercise", top_level=True)
    for level in LEVELS:
        count = sum(exercise.argument == level for exercise in exercises)
        if count > 1:
            yield Problem(exercises[0].line, f"there must be one {level} exercise, found {count}")
    starts = source.fences("solution-start", top_level=True)
    ends = source.fences("solution-end", top_level=True)
    for exercise in exercises:
        label = exercise.options.get("label")
        if exercise.argument not in LEVELS:
            yield Problem(exercise.line, f"exercise title must be one of {', '.join(LEVELS)}")
        if "nonumber" not in exercise.options:
            yield Problem(exercise.line, "exercise needs ':nonumber:': exercises are named by level")
        if not label:
            yield Problem(exercise.line, f"exercise has no :label: (use {lesson_id}-{exercise.argument.lower()})")
            continue
        start = next((b for b in starts if b.line > exercise.end and b.argument == label), None)
        if start is None:
            yield Problem(exercise.line, f"exercise '{label}' has no {{solution-start}} {label}")
            continue
        scaffolds = [b for b in source.fences("python", top_level=True) if exercise.end < b.line < start.line]
        if not any("TODO" in scaffold.code for scaffold in scaffolds):
            yield Problem(exercise.line, f"exercise '{label}' has no starter scaffold (a ```python block with TODOs)")
        if "dropdown" not in start.options.get("class", ""):
            yield Problem(start.line, f"solution of '{label}' must be collapsed: add ':class: dropdown'")
        end = next((b for b in ends if b.line > start.line), None)
        if end is None:
            yield Problem(start.line, f"solution of '{label}' has no {{solution-end}}")
            continue
        if not any(start.line < cell.line < end.line for cell in source.code_cells()):
            yield Problem(start.line, f"solution of '{label}' has no executed {{code-cell}}")
        yield from check_of_exercise(source, exercise, label, start)
    for block in source.fences():
        if block.name == "hint" and "dropdown" not in block.options.get("class", ""):
            yield Problem(block.line, "a hint must be collapsed: add ':class: dropdown'")
        if block.name == "admonition" and block.argument in ("Compare your reasoning", "Answer and explanation"):
            if "dropdown" not in block.options.get("class", ""):
                yield Problem(block.line, f"'{block.argument}' must be collapsed: add ':class: dropdown'")


@problem_list
def check_of_exercise(source: LessonSource, exercise: Fence, label: str, start: Fence) -> Iterator[Problem]:
    """One check cell per exercise, between its scaffold and its solution, defining one check_... function."""
    checks = [cell for cell in source.code_cells() if "exercise-check" in cell.tags]
    mine = [cell for cell in checks if _yaml_value(cell.options.get("exercise")) == label]
    if not mine:
        yield Problem(
            exercise.line,
            f"exercise '{label}' has no check: after its scaffold, add a code cell tagged exercise-check with "
            f"':exercise: {label}' that defines check_{label.rsplit('-', 1)[-1]}() (see docs/contributing.md)",
        )
    for cell in mine:
        if not exercise.end < cell.line < start.line:
            yield Problem(cell.line, f"the check of '{label}' belongs between its scaffold and its solution")
        if exercisechecks.check_function(cell.code) is None:
            yield Problem(cell.line, "a check cell defines exactly one function named check_... (no arguments)")


@problem_list
def check_cells(source: LessonSource) -> Iterator[Problem]:
    """Cell tags the build knows, timings' varying values declared, and code cells that myst-nb runs."""
    for cell in source.code_cells():
        raises = str(cell.options.get("raises", "")).strip()
        if "raises-exception" in cell.tags and not raises:
            yield Problem(
                cell.line,
                "a lesson promises the error a cell shows: replace the raises-exception tag (which lets a cell "
                "raise or not) with ':raises: ErrorName', which fails the build if the cell stops raising it",
            )
        if "raises" in cell.options and not re.fullmatch(r"[A-Za-z_][\w.]*", raises):
            yield Problem(cell.line, f"':raises:' names an exception class, such as TypeError; got {raises!r}")
        for tag in cell.tags:
            if tag in RETIRED_TAGS:
                yield Problem(cell.line, RETIRED_TAGS[tag])
            elif tag not in CELL_TAGS:
                hint = frontmatter.closest(tag, CELL_TAGS)
                yield Problem(cell.line, f"unknown cell tag {tag!r}" + (f"; did you mean {hint!r}?" if hint else ""))
        varies = _yaml_value(cell.options.get("varies"))
        if _CLOCK.search(cell.code) and _PRINTS.search(cell.code) and not varies and "varies" not in cell.tags:
            yield Problem(
                cell.line,
                "this cell prints a timing: declare the values that vary, e.g. \":varies: '[0-9.e-]+ s'\", so the "
                "change report masks them and still compares everything else the cell prints",
            )
        if varies:
            for pattern in varies if isinstance(varies, list) else [varies]:
                try:
                    re.compile(str(pattern))
                except re.error as error:
                    yield Problem(cell.line, f"the varies pattern {pattern!r} is not a regular expression: {error}")
    for block in source.unexecuted_code_cells():
        yield Problem(
            block.line,
            "this {code-cell} is never executed: myst-nb runs only ``` code cells at the top level of the page, "
            "not ':::' blocks or cells inside another directive",
        )
    for block in source.fences():
        if not block.closed:
            yield Problem(block.line, f"this {block.name or 'code'} block is never closed")


def _yaml_value(value):
    """A ``:key: value`` option as myst-nb reads it: YAML (so a pattern with ': ' or '[' needs quotes)."""
    if not isinstance(value, str):
        return value
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError:
        return value


@problem_list
def check_figures(source: LessonSource) -> Iterator[Problem]:
    """Alt text on every figure and image, and a save_figure(...) call that draws the lesson's figure."""
    draws = any("save_figure(" in cell.code for cell in source.code_cells())
    for block in source.fences():
        if block.name in ("figure", "image") and block.is_directive and not str(block.options.get("alt", "")).strip():
            yield Problem(block.line, f"{block.name} '{block.argument}' has no :alt: text")
        if block.name == "figure" and "/figures/" in block.argument and not draws:
            yield Problem(block.line, "the figure is never drawn: call save_figure(...) in a code cell")
    for block in source.blocks:
        if isinstance(block, Paragraph):
            for offset, line in enumerate(block.text.splitlines()):
                for match in re.finditer(r"!\[([^\]]*)\]\(([^)]+)\)", line):
                    if not match[1].strip():
                        yield Problem(block.line + offset, f"image {match[2]} has no alt text")


@problem_list
def check_references(source: LessonSource) -> Iterator[Problem]:
    """'## Primary references' links JAX's own documentation, and only that."""
    headings = source.headings()
    start = next((h for h in headings if h.level == 2 and h.text == "Primary references"), None)
    if start is None:
        return  # reported by check_anatomy
    end = next((h.line for h in headings if h.level <= 2 and h.line > start.line), len(source.lines) + 1)
    links = [(n, url) for n in range(start.line, end) for url in re.findall(r"\]\((\S+?)\)", source.lines[n - 1])]
    if not links:
        yield Problem(start.line, "'## Primary references' lists no links")
    for number, url in links:
        if not url.startswith(REFERENCE_SITE):
            yield Problem(number, f"primary reference {url} is not a docs.jax.dev page")


def check_lesson(path: Path, source: LessonSource | None = None) -> list[Problem]:
    """Every problem in one lesson file except ruff's."""
    front, problems = frontmatter.read_lesson(path)
    if front is None:
        return problems
    source = source or lessonsource.parse(path.read_text(encoding="utf-8"))
    titles = [block for block in source.headings() if block.level == 1]
    if titles and front.lesson.get("title") not in (None, titles[0].text):
        problems.append(
            Problem(front.line_of("lesson.title"), f"'lesson.title' differs from the heading '# {titles[0].text}'")
        )
    problems += check_anatomy(source) + check_experiments(source) + check_exercises(source, path.stem)
    problems += check_cells(source) + check_figures(source) + check_references(source)
    return problems + check_prose(source) + check_code_lines(source)


@problem_list
def check_code_lines(source: LessonSource) -> Iterator[Problem]:
    """Every visible code line, in a cell or a fenced block (an exercise's scaffold), at most CODE_LINE_LIMIT long."""
    for block in source.fences():
        cell = block.name == lessonsource.CODE_CELL
        if block.is_directive and block.name not in CODE_DIRECTIVES:
            continue
        if cell and any(tag in block.tags for tag in HIDDEN_CODE_TAGS):
            continue
        for number, text in block.body:
            if len(text) > CODE_LINE_LIMIT and not (cell and text.startswith("%")):
                yield Problem(
                    number,
                    f"this code line is {len(text)} characters long; a visible code line has at most "
                    f"{CODE_LINE_LIMIT}, so that no code box scrolls sideways: break it (inside brackets, or "
                    "into shorter names and statements)",
                )


def check_prose(source: LessonSource) -> list[Problem]:
    """Raw HTML and {raw} directives in a page's text, each at its line (jaxcourse.output.rawhtml)."""
    return [Problem(found.line, found.message) for found in rawhtml.find_in_page("\n".join(source.lines))]


def docs_pages(root: Path) -> list[Path]:
    """The MyST pages under docs/ that Sphinx builds (none in docs/_*: templates, static files, the extension)."""
    docs = root / "docs"
    return sorted(
        path for path in docs.rglob("*.md") if not any(part.startswith("_") for part in path.relative_to(docs).parts)
    )


def code_only(source: LessonSource) -> str:
    """The lesson with everything but executed cell code blanked, so ruff's lines are the file's."""
    keep = [""] * len(source.lines)
    for cell in source.code_cells():
        for number, text in cell.body:
            keep[number - 1] = "" if text.startswith("%") else text
    return "\n".join(keep) + "\n"


def ruff_problems(sources: dict[Path, LessonSource]) -> dict[Path, list[Problem]]:
    """Ruff's findings in the lessons' code cells, located in the .md files."""
    found: dict[Path, list[Problem]] = {path: [] for path in sources}
    with tempfile.TemporaryDirectory() as scratch:
        copies = {}
        for path, source in sources.items():
            copy = Path(scratch) / f"{path.stem.replace('-', '_')}.py"
            copy.write_text(code_only(source), encoding="utf-8")
            copies[str(copy.resolve())] = path
        command = [sys.executable, "-m", "ruff", "check", "--isolated", "--output-format", "json", *RUFF_LESSON_ARGS]
        result = subprocess.run([*command, *copies], capture_output=True, text=True)
        if result.returncode not in (0, 1):
            raise RuntimeError(f"ruff failed: {result.stderr.strip()}")
        for finding in json.loads(result.stdout or "[]"):
            path = copies[str(Path(finding["filename"]).resolve())]
            found[path].append(Problem(finding["location"]["row"], f"ruff {finding['code']}: {finding['message']}"))
    return found


def lesson_paths(root: Path, names: list[str]) -> list[Path]:
    """The files to check: each named lesson (an id or a path), or every lesson and docs page."""
    if not names:
        return catalogue.lesson_files(root) + docs_pages(root)
    return [Path(name) if name.endswith(".md") else root / catalogue.LESSONS_DIR / f"{name}.md" for name in names]


def is_lesson_file(root: Path, path: Path) -> bool:
    """Whether ``path`` is a lesson: a file in lessons/ whose name does not start with '_' (the template)."""
    absolute = path if path.is_absolute() else root / path
    return absolute.parent.resolve() == (root / catalogue.LESSONS_DIR).resolve() and not path.name.startswith("_")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path.cwd()
    paths = lesson_paths(root, argv)
    missing = [path for path in paths if not path.exists()]
    for path in missing:
        print(f"{path}: no such lesson file", file=sys.stderr)
    sources = {path: lessonsource.parse(path.read_text(encoding="utf-8")) for path in paths if path.exists()}
    lessons = {path: source for path, source in sources.items() if is_lesson_file(root, path)}
    from_ruff = ruff_problems(lessons)
    total = len(missing)
    for path, source in sources.items():
        shown = path.relative_to(root) if path.is_absolute() and path.is_relative_to(root) else path
        found = check_lesson(path, source) + from_ruff[path] if path in lessons else check_prose(source)
        for problem in sorted(found, key=lambda problem: problem.line):
            print(f"{shown}:{problem.line}: {problem.message}")
            total += 1
    others = len(sources) - len(lessons)
    checked = plural(len(lessons), "lesson") + (f" and {plural(others, 'page')}" if others else "")
    print(f"{checked} checked, {plural(total, 'problem')}", file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
