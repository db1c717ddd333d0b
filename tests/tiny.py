"""Minimal lessons for tiny test sites (complete front matter plus the given body), and the
objects the unit tests build from them: a page being read, a run's stamp."""

from __future__ import annotations

from pathlib import Path

FRONT_MATTER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
lesson:
  id: {id}
  title: {title}
  phase: 9
  phase_title: Test phase
  order: 1
  minutes: 5
  device: CPU
{extra}---
"""


def lesson(lesson_id: str, body: str, *, title: str = "A tiny lesson", extra: str = "") -> str:
    return FRONT_MATTER.format(id=lesson_id, title=title, extra=extra) + f"\n# {title}\n\n" + body


def code_cell(source: str, *, alt: str | None = None) -> str:
    """A code cell; with ``alt``, the alt text of the image it displays (myst-nb's cell metadata)."""
    options = f"---\nmystnb:\n  image:\n    alt: {alt}\n---\n" if alt else ""
    return f"```{{code-cell}} ipython3\n{options}{source}\n```\n"


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    return next(number for number, line in enumerate(text.splitlines(), start=1) if needle in line)


def exercise(level: str, label: str, prompt: str) -> str:
    """An exercise directive (four-backtick fence, so it can hold nested directives)."""
    return f"````{{exercise}} {level}\n:label: {label}\n:nonumber:\n\n{prompt}\n````\n"


def notebook_page(title: str, body: str) -> str:
    """A docs/ page that is a notebook but not a lesson: a kernelspec and no 'lesson:' mapping."""
    front = FRONT_MATTER.split("lesson:")[0] + "orphan: true\n---\n"
    return front + f"\n# {title}\n\n" + body


# A run's stamp as the kernel publishes it: JAX 0.10.2 on 8 simulated CPU devices.
STAMP = {
    "started": "2026-12-01T19:22:07.123456+00:00",
    "jax": "0.10.2",
    "jaxlib": "0.10.2",
    "python": "3.11.7",
    "backend": "cpu",
    "device_count": 8,
    "simulated_devices": True,
}


def page_being_read(text: str, docname: str, *, lesson_page: bool | None = None):
    """The engine's record of a page being read, from its text; a lesson when its front matter says so."""
    from jaxcourse.source import frontmatter, lessonsource, pages

    front = frontmatter.parse(text)
    is_lesson = "lesson" in front.data if lesson_page is None else lesson_page
    return pages.Page(
        docname=docname,
        path=Path(f"{docname}.md"),
        page_id=pages.page_id(docname, front, is_lesson),
        lesson=is_lesson,
        front=front,
        settings=frontmatter.execution_settings(front),
        fingerprint="f",
        figures_dir=Path("figures"),
        source=lessonsource.parse(text),
    )
