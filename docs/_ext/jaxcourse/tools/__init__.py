"""Command-line tools: the checker, a new lesson, porting pages, the site build and its shards,
the compatibility run, and the workflows' reports.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def report_arguments(module: str, doc: str, argv: list[str], arguments: dict[str, str]) -> argparse.Namespace:
    """The command line of a workflow's report, ``python -m jaxcourse.tools.MODULE``.

    ``arguments`` maps each argument to its help, in order: plain names are files (paths), and
    ``--names`` are optional strings, such as the URL the report links to.
    """
    parser = argparse.ArgumentParser(prog=f"python -m jaxcourse.tools.{module}", description=doc.splitlines()[0])
    for name, help_text in arguments.items():
        parser.add_argument(name, type=None if name.startswith("--") else Path, help=help_text)
    return parser.parse_args(argv)


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, with an 's' unless there is exactly one: '1 problem', '2 problems'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def read_json(path: Path, default):
    """The JSON file at ``path``, or ``default`` where there is no such file."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else default
