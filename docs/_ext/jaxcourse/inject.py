"""Rewrite a notebook's source at ``source-read``, keeping every line where the author put it.

Lessons: authors write no boilerplate. The front matter block is rewritten as
one JSON line plus blank padding, followed by a hidden setup cell and one blank
line, all within the front matter's original height; a hidden verdict cell is
appended at the end. Every line of the author's text keeps its number, so
warnings and errors point at the author's file.

Every notebook (lesson or not): myst-nb drops the blank lines that open a
markdown cell but still numbers the cell from its first line, so text in a cell
opened by k blank lines is reported k - 1 lines too early (and text right after
a closing fence one line too late). Each run of opening blank lines is cut to
one by turning the extra lines into MyST comments (``%``), which render as
nothing; text right after a closing fence is reported so the author adds the
blank line.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
from pathlib import Path

from . import frontmatter, kernel, lessonsource

SETUP_TAG = "jaxcourse-setup"
VERDICT_TAG = "jaxcourse-verdict"
_RUNTIME_NAME = "_jaxcourse_runtime"
#: Environment variables that change what a lesson computes, so they key the execution cache.
NUMERICS_VARIABLE_PREFIXES = ("JAX_", "XLA_", "TF_CPP_", "OMP_", "MKL_", "OPENBLAS_")
#: Front matter lines the rewrite needs: '---', the JSON line, '---', the setup cell (4), a blank line.
MIN_FRONT_MATTER_LINES = 8


@functools.cache
def _installed_packages() -> str:
    distributions = importlib.metadata.distributions()
    return "\n".join(sorted(f"{dist.metadata['Name']}=={dist.version}".lower() for dist in distributions))


def numerics_environment(environ=os.environ) -> dict[str, str]:
    """The environment variables a kernel inherits that can change results (JAX_*, XLA_FLAGS, ...)."""
    return {name: value for name, value in sorted(environ.items()) if name.startswith(NUMERICS_VARIABLE_PREFIXES)}


def environment_fingerprint(environment_files: list[Path], environ=os.environ) -> str:
    """A hash of everything outside a lesson's code that can change its outputs.

    Python, every installed package, the kernel spec, the kernel-side runtime,
    the environment variables that change numerics, and the given files (the
    pinned requirements). It sits in each lesson's setup cell, so the execution
    cache (keyed on cell sources) misses whenever any of these change.
    """
    digest = hashlib.sha256()
    digest.update(platform.python_version().encode())
    digest.update(_installed_packages().encode())
    digest.update(json.dumps(numerics_environment(environ), sort_keys=True).encode())
    package = Path(__file__).parent
    for path in [package / "runtime.py", package / "ipython.py", kernel.SPEC_DIR / "kernel.json", *environment_files]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class Rewrite:
    text: str
    problems: list[frontmatter.Problem]


def even_cell_openings(lines: list[str], source: lessonsource.LessonSource) -> list[frontmatter.Problem]:
    """Cut each markdown cell's opening blank lines to one, in place (see the module docstring)."""
    problems = [
        frontmatter.Problem(
            fence.line, f"this {fence.name or 'code'} block is never closed: end it with a line of its fence"
        )
        for fence in source.fences(top_level=True)
        if not fence.closed
    ]
    for fence in source.code_cells():
        first = fence.end  # 0-based index of the line after the closing fence
        blank = first
        while blank < len(lines) and not lines[blank].strip():
            blank += 1
        if blank == len(lines):
            continue  # nothing follows the cell
        if blank == first:
            problems.append(
                frontmatter.Problem(
                    first + 1, "put a blank line between a code cell's closing fence and the text after it"
                )
            )
        for index in range(first + 1, blank):
            lines[index] = "%"
    return problems


def rewrite_notebook(text: str) -> Rewrite:
    """A notebook that is not a lesson: only its markdown cells' openings are evened."""
    lines = text.splitlines()
    problems = even_cell_openings(lines, lessonsource.parse(text))
    return Rewrite("\n".join(lines) + "\n", problems)


def rewrite_lesson(
    text: str,
    front: frontmatter.FrontMatter,
    *,
    lesson_path: Path,
    figures_dir: Path,
    fingerprint: str,
) -> Rewrite:
    """The lesson text with the setup and verdict cells added, line numbers kept."""
    if front.line_count < MIN_FRONT_MATTER_LINES:
        raise frontmatter.FrontMatterError(
            1, f"front matter is too short: a lesson needs at least {MIN_FRONT_MATTER_LINES} lines of it"
        )
    lesson_id = front.lesson["id"]
    here = lesson_path.parent
    arguments = [
        repr(lesson_id),
        f"figures_dir={os.path.relpath(figures_dir, here)!r}",
        f"environment={fingerprint!r}",
    ]
    if front.lesson.get("cpu_devices") is not None:
        arguments.append(f"cpu_devices={front.lesson['cpu_devices']!r}")
    setup_code = f"from jaxcourse import runtime as {_RUNTIME_NAME}; {_RUNTIME_NAME}.begin({', '.join(arguments)})"
    setup_cell = ["```{code-cell} ipython3", f":tags: [remove-cell, {SETUP_TAG}]", setup_code, "```", ""]
    front_block = ["---", json.dumps(front.data, sort_keys=True, default=str)]
    front_block += [""] * (front.line_count - len(front_block) - 1 - len(setup_cell)) + ["---"]
    lines = text.splitlines()
    source = lessonsource.parse(text)
    problems = even_cell_openings(lines, source)
    body = lines[front.line_count :]
    # Close a block the author left open (reported above), so it cannot swallow the verdict cell.
    body += [fence.markup for fence in source.fences(top_level=True) if not fence.closed]
    # The setup cell and its blank line now open the body's first markdown cell: even it too.
    opening = 0
    while opening < len(body) and not body[opening].strip():
        opening += 1
    if opening < len(body):
        body[:opening] = ["%"] * opening
    verdict = ["", "```{code-cell} ipython3", f":tags: [remove-cell, {VERDICT_TAG}]", f"{_RUNTIME_NAME}.finish()"]
    verdict += ["```", ""]
    return Rewrite("\n".join(front_block + setup_cell + body + verdict), problems)
