"""Start a lesson from the template: ``python -m jaxcourse.tools.newlesson ID "Title"`` (``nox -s new``).

Writes ``lessons/ID.md`` from ``lessons/_template.md`` with the id, title, exercise labels and figure filled in,
placed after the lessons that share the id's slug (``foundations-06`` joins their phase after foundations-05; a
new slug opens the next phase). The new lesson passes the checker and builds; its TODOs are the author's.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

from ..source import catalogue

TEMPLATE = "_template.md"
TEMPLATE_ID = "new-lesson-00"
TEMPLATE_TITLE = "TODO lesson title"
ID_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*-\d{2}$")


def yaml_text(value: str) -> str:
    """``value`` as a YAML scalar: plain when YAML reads it back unchanged, else quoted."""
    try:
        plain = yaml.safe_load(f"key: {value}")
    except yaml.YAMLError:
        plain = None
    return value if isinstance(plain, dict) and plain.get("key") == value else json.dumps(value)


_PLACE = re.compile(r"^(  (?:phase|phase_title|order): )[^#\n]*?(  #.*)?$", re.M)


def place_in_course(root: Path, lesson_id: str) -> dict:
    """Phase, phase title and order for a new lesson, from the lessons that share its slug."""
    slug = lesson_id.rsplit("-", 1)[0]
    existing = catalogue.lessons(root)
    siblings = [lesson for lesson in existing if lesson.id.rsplit("-", 1)[0] == slug]
    if siblings:
        last = max(siblings, key=lambda lesson: lesson.meta["order"])
        return {"phase": last.meta["phase"], "phase_title": last.meta["phase_title"], "order": last.meta["order"] + 1}
    phase = max((lesson.meta["phase"] for lesson in existing), default=0) + 1
    return {"phase": phase, "phase_title": "TODO phase title", "order": 1}


def new_lesson_text(template: str, lesson_id: str, title: str, place: dict | None = None) -> str:
    """The template's text for a new lesson: its id, title and, given ``place``, its place in the course."""
    if TEMPLATE_ID not in template or f"title: {TEMPLATE_TITLE}" not in template:
        raise ValueError(f"{TEMPLATE} no longer holds {TEMPLATE_ID!r} and 'title: {TEMPLATE_TITLE}'")
    text = template.replace(TEMPLATE_ID, lesson_id).replace(f"title: {TEMPLATE_TITLE}", f"title: {yaml_text(title)}")
    if place:
        scalars = {key: str(value) if isinstance(value, int) else yaml_text(value) for key, value in place.items()}
        text = _PLACE.sub(lambda match: f"{match[1]}{scalars[match[1].strip().rstrip(':')]}{match[2] or ''}", text)
    return text.replace(f"# {TEMPLATE_TITLE}", f"# {title}")


def create(root: Path, lesson_id: str, title: str) -> Path:
    """Write the new lesson; ValueError for a bad or taken id, or an unusable title."""
    if not ID_PATTERN.match(lesson_id):
        raise ValueError(
            f"lesson id {lesson_id!r} must look like <slug>-NN: lower-case words joined by '-', "
            "then a two-digit number (transforms-09, foundations-06)"
        )
    title = title.strip()
    if not title or "\n" in title or title.startswith("#"):
        raise ValueError('the title is one line of text, e.g. "Batch a function with vmap"')
    folder = Path(root, catalogue.LESSONS_DIR)
    path = folder / f"{lesson_id}.md"
    if path.exists():
        raise ValueError(f"{path.relative_to(root)} already exists: choose another id")
    place = place_in_course(root, lesson_id)
    text = new_lesson_text((folder / TEMPLATE).read_text(encoding="utf-8"), lesson_id, title, place)
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(
            'usage: nox -s new -- ID "Title"   (for example: nox -s new -- transforms-09 "Batch with vmap")',
            file=sys.stderr,
        )
        return 2
    root = Path.cwd()
    try:
        path = create(root, argv[0], argv[1])
    except ValueError as error:
        print(f"not created: {error}", file=sys.stderr)
        return 1
    print(
        f"created {path.relative_to(root)}: replace its TODOs, then run nox -s lint -- {argv[0]}"
        f" and nox -s lesson -- {argv[0]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
