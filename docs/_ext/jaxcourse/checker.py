"""The lesson checker: ``python -m jaxcourse.checker [lessons/ID.md ...]``.

Checks, without building anything, that each lesson has complete front matter,
the lesson anatomy in order, exercises with a scaffold and an executed
reference solution, alt text on every figure, and ruff-clean code cells. It
reports every problem as ``lessons/FILE.md:LINE: message`` and exits 1 if any.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from . import frontmatter
from .frontmatter import Problem
from .mdblocks import Block, blocks

LEVELS = ("Foundation", "Practice", "Challenge")
REFERENCE_SITE = "https://docs.jax.dev/"

# The anatomy every lesson follows, in order: (pattern matched against a line, what it is).
ANATOMY: list[tuple[str, str]] = [
    (r"# (?!#)", "the '# Title' heading"),
    (r"## What you will be able to do$", "'## What you will be able to do'"),
    (r"## The problem$", "'## The problem'"),
    (r"## The idea$", "'## The idea'"),
    (r"### Pause and reason$", "'### Pause and reason' inside a concept section"),
    (r"```\{admonition\} Compare your reasoning$", "a 'Compare your reasoning' dropdown after the pause"),
    (r"## Step 1: ", "'## Step 1: ...'"),
    (r"## Run the example$", "'## Run the example'"),
    (r"```\{figure\} ", "the lesson's figure"),
    (r"### Read the figure$", "'### Read the figure'"),
    (r"### Connect it to the computation$", "'### Connect it to the computation'"),
    (r"## Recorded reference execution$", "'## Recorded reference execution'"),
    (r"```\{recorded-run\}", "the {recorded-run} directive under it"),
    (r"\*\*Predict before running:\*\*", "an experiment opening with '**Predict before running:**'"),
    (r"````?\{exercise\} Foundation", "the Foundation exercise"),
    (r"````?\{exercise\} Practice", "the Practice exercise"),
    (r"````?\{exercise\} Challenge", "the Challenge exercise"),
    (r"## Check your understanding$", "'## Check your understanding'"),
    (r"```\{admonition\} Answer and explanation$", "an 'Answer and explanation' dropdown"),
    (r"## Diagnose the result$", "'## Diagnose the result'"),
    (r"## Carry forward$", "'## Carry forward'"),
    (r"## Keep your evidence$", "'## Keep your evidence'"),
    (r"## Primary references$", "'## Primary references'"),
]

# Ruff on lesson cells: notebook code re-imports and redefines by design.
RUFF_LESSON_ARGS = ["--select", "E,F,W", "--ignore", "E402,E501,E731,F811", "--line-length", "120"]


def check_anatomy(lines: list[str]) -> list[Problem]:
    problems = []
    position = 0
    for pattern, what in ANATOMY:
        regex = re.compile(pattern)
        hit = next((i for i in range(position, len(lines)) if regex.match(lines[i])), None)
        if hit is None:
            anywhere = next((i for i, line in enumerate(lines) if regex.match(line)), None)
            if anywhere is None:
                # Located at the last anchor found: the missing part belongs after it.
                problems.append(Problem(max(position, 1), f"missing {what} after this point"))
            else:
                problems.append(Problem(anywhere + 1, f"{what} is out of order: it must come after line {position}"))
            continue
        position = hit + 1
    steps = [int(m[1]) for line in lines if (m := re.match(r"## Step (\d+): ", line))]
    if steps and steps != list(range(1, len(steps) + 1)):
        problems.append(Problem(1, f"steps must be numbered 1, 2, 3...; found {steps}"))
    return problems


def check_exercises(all_blocks: list[Block], lesson_id: str) -> list[Problem]:
    problems = []
    exercises = [block for block in all_blocks if block.kind == "exercise"]
    for level in LEVELS:
        count = sum(block.argument == level for block in exercises)
        if count > 1:
            problems.append(Problem(exercises[0].line, f"there must be one {level} exercise, found {count}"))
    for exercise in exercises:
        label = exercise.options.get("label")
        if exercise.argument not in LEVELS:
            problems.append(Problem(exercise.line, f"exercise title must be one of {', '.join(LEVELS)}"))
        if "nonumber" not in exercise.options:
            problems.append(Problem(exercise.line, "exercise needs ':nonumber:': exercises are named by level"))
        if not label:
            problems.append(
                Problem(exercise.line, f"exercise has no :label: (use {lesson_id}-{exercise.argument.lower()})")
            )
            continue
        later = [block for block in all_blocks if block.line > exercise.end]
        start = next((b for b in later if b.kind == "solution-start" and b.argument == label), None)
        if start is None:
            problems.append(Problem(exercise.line, f"exercise '{label}' has no {{solution-start}} {label}"))
            continue
        scaffolds = [b for b in later if b.kind == "python" and b.line < start.line]
        if not any("TODO" in text for scaffold in scaffolds for _, text in scaffold.body):
            problems.append(
                Problem(exercise.line, f"exercise '{label}' has no starter scaffold (a ```python block with TODOs)")
            )
        if "dropdown" not in start.options.get("class", ""):
            problems.append(Problem(start.line, f"solution of '{label}' must be collapsed: add ':class: dropdown'"))
        end = next((b for b in later if b.kind == "solution-end" and b.line > start.line), None)
        if end is None:
            problems.append(Problem(start.line, f"solution of '{label}' has no {{solution-end}}"))
            continue
        if not any(b.kind == "code-cell" and start.line < b.line < end.line for b in all_blocks):
            problems.append(Problem(start.line, f"solution of '{label}' has no executed {{code-cell}}"))
    for block in all_blocks:
        if block.kind in ("hint",) and "dropdown" not in block.options.get("class", ""):
            problems.append(Problem(block.line, "a hint must be collapsed: add ':class: dropdown'"))
        if block.kind == "admonition" and block.argument in ("Compare your reasoning", "Answer and explanation"):
            if "dropdown" not in block.options.get("class", ""):
                problems.append(Problem(block.line, f"'{block.argument}' must be collapsed: add ':class: dropdown'"))
    return problems


def check_figures(lines: list[str], all_blocks: list[Block], lesson_id: str) -> list[Problem]:
    problems = []
    for block in all_blocks:
        if block.kind in ("figure", "image") and not block.options.get("alt", "").strip():
            problems.append(Problem(block.line, f"{block.kind} '{block.argument}' has no :alt: text"))
        if block.kind == "figure" and "/figures/" in block.argument:
            if not any(
                "save_figure(" in text for cell in all_blocks if cell.kind == "code-cell" for _, text in cell.body
            ):
                problems.append(Problem(block.line, "the figure is never drawn: call save_figure(...) in a code cell"))
    for number, line in enumerate(lines, start=1):
        for match in re.finditer(r"!\[([^\]]*)\]\(([^)]+)\)", line):
            if not match[1].strip():
                problems.append(Problem(number, f"image {match[2]} has no alt text"))
    return problems


def check_references(lines: list[str]) -> list[Problem]:
    """'## Primary references' links JAX's own documentation, and only that."""
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Primary references"), None)
    if start is None:
        return []  # reported by check_anatomy
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    links = [(i + 1, url) for i in range(start, end) for url in re.findall(r"\]\((\S+?)\)", lines[i])]
    if not links:
        return [Problem(start + 1, "'## Primary references' lists no links")]
    return [
        Problem(number, f"primary reference {url} is not a docs.jax.dev page")
        for number, url in links
        if not url.startswith(REFERENCE_SITE)
    ]


def check_lesson(path: Path) -> list[Problem]:
    """Every problem in one lesson file except ruff's."""
    text = path.read_text(encoding="utf-8")
    front, problems = frontmatter.read_lesson(path)
    if front is None:
        return problems
    lines = text.splitlines()
    body_start = front.line_count
    body = [""] * body_start + lines[body_start:]  # keep line numbers
    all_blocks = blocks(body)
    lesson_id = path.stem
    title = next((line[2:].strip() for line in body if line.startswith("# ")), None)
    if title is not None and front.lesson.get("title") not in (None, title):
        problems.append(Problem(front.line_of("lesson.title"), f"'lesson.title' differs from the heading '# {title}'"))
    problems += check_anatomy(body)
    problems += check_exercises(all_blocks, lesson_id)
    problems += check_figures(body, all_blocks, lesson_id)
    problems += check_references(body)
    return problems


def code_only(path: Path) -> str:
    """The lesson with everything but executed cell code blanked, so ruff's lines are the file's."""
    lines = path.read_text(encoding="utf-8").splitlines()
    keep = [""] * len(lines)
    for block in blocks(lines):
        if block.kind == "code-cell":
            for number, text in block.body:
                keep[number - 1] = "" if text.startswith("%") else text
    return "\n".join(keep) + "\n"


def ruff_problems(paths: list[Path]) -> dict[Path, list[Problem]]:
    """Ruff's findings in the lessons' code cells, located in the .md files."""
    found: dict[Path, list[Problem]] = {path: [] for path in paths}
    with tempfile.TemporaryDirectory() as scratch:
        copies = {}
        for path in paths:
            copy = Path(scratch) / f"{path.stem.replace('-', '_')}.py"
            copy.write_text(code_only(path), encoding="utf-8")
            copies[str(copy.resolve())] = path
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "check",
                "--isolated",
                "--output-format",
                "json",
                *RUFF_LESSON_ARGS,
                *copies,
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode not in (0, 1):
            raise RuntimeError(f"ruff failed: {result.stderr.strip()}")
        for finding in json.loads(result.stdout or "[]"):
            path = copies[str(Path(finding["filename"]).resolve())]
            found[path].append(Problem(finding["location"]["row"], f"ruff {finding['code']}: {finding['message']}"))
    return found


def lesson_paths(root: Path, names: list[str]) -> list[Path]:
    if names:
        return [Path(name) if name.endswith(".md") else root / "lessons" / f"{name}.md" for name in names]
    return sorted(path for path in (root / "lessons").glob("*.md") if not path.name.startswith("_"))


def main(argv: list[str]) -> int:
    root = Path.cwd()
    paths = lesson_paths(root, argv)
    missing = [path for path in paths if not path.exists()]
    for path in missing:
        print(f"{path}: no such lesson file", file=sys.stderr)
    paths = [path for path in paths if path.exists()]
    from_ruff = ruff_problems(paths)
    total = len(missing)
    for path in paths:
        shown = path.relative_to(root) if path.is_absolute() and path.is_relative_to(root) else path
        for problem in sorted(check_lesson(path) + from_ruff[path], key=lambda problem: problem.line):
            print(f"{shown}:{problem.line}: {problem.message}")
            total += 1
    checked = f"{len(paths)} lesson{'s' if len(paths) != 1 else ''}"
    print(f"{checked} checked, {total} problem{'s' if total != 1 else ''}", file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
