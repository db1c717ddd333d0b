"""Add the hidden setup and verdict cells to a lesson's source before parsing.

Authors write no boilerplate: at ``source-read`` the front matter block is
rewritten as one JSON line followed by a hidden setup cell, padded with blank
lines to its original height, so every line after it keeps its number and
warnings still point at the author's file. The verdict cell is appended at
the end, which moves nothing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
from pathlib import Path

from . import frontmatter

SETUP_TAG = "jaxcourse-setup"
VERDICT_TAG = "jaxcourse-verdict"
_RUNTIME_NAME = "_jaxcourse_runtime"


@functools.cache
def _installed_packages() -> str:
    distributions = importlib.metadata.distributions()
    return "\n".join(sorted(f"{dist.metadata['Name']}=={dist.version}".lower() for dist in distributions))


def environment_fingerprint(environment_files: list[Path]) -> str:
    """A hash of Python, every installed package, the pinned requirements and the runtime module.

    It sits in each lesson's setup cell, so the execution cache (keyed on cell
    sources) misses whenever any of these change.
    """
    digest = hashlib.sha256()
    digest.update(platform.python_version().encode())
    digest.update(_installed_packages().encode())
    for path in [Path(__file__).parent / "runtime.py", *environment_files]:
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]


def inject_cells(
    text: str, front: frontmatter.FrontMatter, *, lesson_path: Path, figures_dir: Path, fingerprint: str
) -> str:
    """The lesson text with the setup and verdict cells added, line numbers kept."""
    lesson_id = front.lesson["id"]
    here = lesson_path.parent
    ext_dir = os.path.relpath(Path(__file__).parent.parent, here)
    setup_code = (
        f"import sys; sys.path.insert(0, {ext_dir!r}); "
        f"from jaxcourse import runtime as {_RUNTIME_NAME}; "
        f"{_RUNTIME_NAME}.begin({lesson_id!r}, figures_dir={os.path.relpath(figures_dir, here)!r}, "
        f"environment={fingerprint!r})"
    )
    header = [
        "---",
        json.dumps(front.data, sort_keys=True, default=str),
        "---",
        "```{code-cell} ipython3",
        f":tags: [remove-input, {SETUP_TAG}]",
        setup_code,
        "```",
    ]
    if front.line_count < len(header):
        raise frontmatter.FrontMatterError(
            1, f"front matter is too short: a lesson needs at least {len(header)} lines of it"
        )
    header += [""] * (front.line_count - len(header))
    body = text.splitlines()[front.line_count :]
    verdict = [
        "",
        "```{code-cell} ipython3",
        f":tags: [remove-input, {VERDICT_TAG}]",
        f"{_RUNTIME_NAME}.finish()",
        "```",
        "",
    ]
    return "\n".join(header + body + verdict)
