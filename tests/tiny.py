"""Minimal lessons for tiny test sites: complete front matter plus the given body."""

from __future__ import annotations

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
