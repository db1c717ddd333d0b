"""What changed in this build's recordings since an earlier site: the change report.

Every build publishes ``recordings.json``: per lesson, the run stamp, what each
code cell showed (with its line in the lesson and a hash of its code) and a hash
of each figure it drew. Comparing two of them gives, per lesson: stamp changes
(JAX, jaxlib, Python, device), every cell output that changed as a unified
diff located by lesson line, figures whose bytes changed, and lessons added or
removed. Outputs expected to vary (cells tagged ``varies``: timings) are
counted, never diffed.

The report is shown three ways: a console summary (printed by ``sitebuild``),
``_build/changes.json``, and the site page "What changed in this build".
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import hashlib
import json
from collections.abc import Collection
from pathlib import Path

RECORDINGS = "recordings.json"
VARIES_TAG = "varies"
STAMP_FIELDS = ("jax", "jaxlib", "python", "backend", "device_kind", "device_count", "x64")
FORMAT = 1


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def lesson_recording(stamp: dict | None, cells: list[dict], figures: dict[str, str], source: str) -> dict:
    """One lesson's entry of recordings.json. ``cells``: {line, code, tags, shown} per author's cell."""
    return {
        "source": source,
        "stamp": {field: (stamp or {}).get(field) for field in (*STAMP_FIELDS, "started")},
        "cells": cells,
        "figures": figures,
    }


def write_recordings(path: Path, lessons: dict[str, dict]) -> None:
    path.write_text(json.dumps({"format": FORMAT, "lessons": lessons}, indent=1, sort_keys=True), encoding="utf-8")


def load_recordings(location: str | Path) -> dict[str, dict] | None:
    """The lessons of an earlier site's recordings.json (a site folder or the file), or None if absent."""
    path = Path(location)
    if path.is_dir():
        path = path / RECORDINGS
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return data["lessons"]


@dataclasses.dataclass
class OutputChange:
    line: int | None  # the cell's line in this build's lesson (None: the cell is gone)
    old_line: int | None
    diff: str  # unified diff of what the cell showed


@dataclasses.dataclass
class LessonChanges:
    lesson: str
    source: str
    status: str  # "added", "removed", "changed" or "unchanged"
    stamp: dict[str, list] = dataclasses.field(default_factory=dict)  # field -> [old, new]
    outputs: list[OutputChange] = dataclasses.field(default_factory=list)
    figures: list[str] = dataclasses.field(default_factory=list)
    varying: int = 0  # outputs of `varies` cells that changed: expected, counted only

    @property
    def lines(self) -> list[str]:
        return [str(change.line) if change.line else f"{change.old_line} (removed)" for change in self.outputs]


@dataclasses.dataclass
class ChangeReport:
    compared_with: str | None  # where the earlier recordings came from; None for a first build
    lessons: list[LessonChanges]

    @property
    def changed(self) -> list[LessonChanges]:
        return [lesson for lesson in self.lessons if lesson.status != "unchanged"]

    def to_json(self) -> dict:
        return {
            "compared_with": self.compared_with,
            "lessons": {lesson.lesson: dataclasses.asdict(lesson) for lesson in self.lessons},
            "summary": self.summary(),
        }

    def summary(self) -> str:
        """One line, e.g. '12 lessons unchanged; transforms-01 changed 2 outputs (lines 88, 140)'.

        A stamp change that several lessons share (a JAX upgrade moves them all) is
        stated once, with how many lessons it covers, instead of once per lesson.
        """
        if self.compared_with is None:
            return "First build: there is no earlier site to compare its recordings with."
        shared = shared_stamp_changes(self.lessons)
        parts = [f"{count} lessons ran under {stamp_text(stamp)}" for stamp, count in shared.items()]
        described = {lesson.lesson: describe(lesson, omit=shared) for lesson in self.changed}
        unchanged = len(self.lessons) - sum(1 for text in described.values() if text)
        what = "with unchanged outputs and figures" if shared else "unchanged"
        parts.append(f"{unchanged} lesson{'s' if unchanged != 1 else ''} {what}")
        parts.extend(f"{name} {text}" for name, text in described.items() if text)
        varying = sum(lesson.varying for lesson in self.lessons)
        if varying:
            verb = "differ" if varying != 1 else "differs"
            parts.append(f"{varying} varying output{'s' if varying != 1 else ''} (timings) {verb}, as expected")
        return "; ".join(parts)


StampChange = tuple[tuple[str, str, str], ...]  # (field, old, new) for each field that moved


def stamp_change(lesson: LessonChanges) -> StampChange:
    return tuple((field, str(old), str(new)) for field, (old, new) in lesson.stamp.items())


def stamp_text(change: StampChange) -> str:
    return ", ".join(f"{field} {new} (was {old})" for field, old, new in change)


def shared_stamp_changes(lessons: list[LessonChanges]) -> dict[StampChange, int]:
    """Stamp changes that two or more lessons have in common, with how many have each."""
    counts = collections.Counter(stamp_change(lesson) for lesson in lessons if lesson.stamp)
    return {change: count for change, count in counts.items() if count > 1}


def describe(lesson: LessonChanges, omit: Collection[StampChange] = ()) -> str:
    """What changed in one lesson; empty when all that changed is a stamp change in ``omit``."""
    if lesson.status in ("added", "removed"):
        return lesson.status
    parts = []
    if lesson.outputs:
        plural = "s" if len(lesson.outputs) != 1 else ""
        parts.append(f"changed {len(lesson.outputs)} output{plural} (line{plural} {', '.join(lesson.lines)})")
    if lesson.figures:
        parts.append(f"changed figure{'s' if len(lesson.figures) != 1 else ''} {', '.join(lesson.figures)}")
    moved = stamp_change(lesson)
    if moved and moved not in omit:
        parts.append("ran under " + stamp_text(moved))
    return " and ".join(parts)


def _diff(old: str, new: str, source: str, old_line: int | None, line: int) -> str:
    return "\n".join(
        difflib.unified_diff(
            old.splitlines(),
            new.splitlines(),
            fromfile=f"earlier site: {source}:{old_line}" if old_line else "earlier site: (no such cell)",
            tofile=f"this build: {source}:{line}" if line else "this build: (cell removed)",
            lineterm="",
        )
    )


def _compare_cells(old_cells: list[dict], new_cells: list[dict], source: str, lesson: LessonChanges) -> None:
    """Pair cells by their code (a cell whose code changed pairs with the one it replaced), then compare
    what each showed. A cell that is new compares with nothing; a removed one with nothing it shows now."""
    nothing = {"shown": "", "line": None, "tags": []}
    codes = difflib.SequenceMatcher(a=[c["code"] for c in old_cells], b=[c["code"] for c in new_cells], autojunk=False)
    for _, a1, a2, b1, b2 in codes.get_opcodes():
        olds, news = old_cells[a1:a2], new_cells[b1:b2]
        for index in range(max(len(olds), len(news))):
            old = olds[index] if index < len(olds) else nothing
            new = news[index] if index < len(news) else {**nothing, "line": None}
            if old["shown"] == new["shown"]:
                continue
            if VARIES_TAG in new["tags"] or VARIES_TAG in old["tags"]:
                lesson.varying += 1
                continue
            diff = _diff(old["shown"], new["shown"], source, old["line"], new["line"])
            lesson.outputs.append(OutputChange(new["line"], old["line"], diff))


def compare(old: dict[str, dict] | None, new: dict[str, dict], compared_with: str | None) -> ChangeReport:
    if old is None:
        return ChangeReport(
            None, [LessonChanges(lesson_id, entry["source"], "unchanged") for lesson_id, entry in sorted(new.items())]
        )
    lessons = []
    for lesson_id in sorted(set(old) | set(new)):
        if lesson_id not in old:
            lessons.append(LessonChanges(lesson_id, new[lesson_id]["source"], "added"))
            continue
        if lesson_id not in new:
            lessons.append(LessonChanges(lesson_id, old[lesson_id]["source"], "removed"))
            continue
        before, after = old[lesson_id], new[lesson_id]
        lesson = LessonChanges(lesson_id, after["source"], "unchanged")
        for field in STAMP_FIELDS:
            if before["stamp"].get(field) != after["stamp"].get(field):
                lesson.stamp[field] = [before["stamp"].get(field), after["stamp"].get(field)]
        _compare_cells(before["cells"], after["cells"], after["source"], lesson)
        lesson.figures = sorted(
            name
            for name in set(before["figures"]) | set(after["figures"])
            if before["figures"].get(name) != after["figures"].get(name)
        )
        if lesson.stamp or lesson.outputs or lesson.figures:
            lesson.status = "changed"
        lessons.append(lesson)
    return ChangeReport(str(compared_with), lessons)

