"""The weekly link check's issue: ``python -m jaxcourse.tools.linkreport OUTPUT.json BODY.md``.

``nox -s linkcheck`` runs Sphinx's ``linkcheck`` builder (in the workflow, where there is network), which writes
``output.json``. This module turns its broken links into the body of one issue, by page and line, which the
workflow opens or updates; it exits 1 when something is broken, so that the workflow knows whether to file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import plural, report_arguments

COMMAND_LINE = {
    "output": "the linkcheck builder's output.json",
    "out": "where to write the issue's body",
    "--run-url": "the workflow run that checked the links",
}

#: The issue's title: the workflow finds its open issue by it.
TITLE = "Broken links on the site"
#: What the linkcheck builder reports as a link that does not work.
BROKEN = ("broken", "timeout")


def read_results(path: Path) -> list[dict]:
    """The linkcheck builder's output.json: one JSON object per line."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def broken_links(results: list[dict]) -> dict[str, list[dict]]:
    """Source file -> its broken links, by line."""
    pages: dict[str, list[dict]] = {}
    for result in results:
        if result.get("status") in BROKEN:
            pages.setdefault(result["filename"], []).append(result)
    return {
        page: sorted(found, key=lambda r: (r.get("lineno") or 0, r["uri"])) for page, found in sorted(pages.items())
    }


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def issue_body(results: list[dict], run_url: str | None = None) -> str:
    """Markdown for the issue: a table per page of line, link and what went wrong."""
    pages = broken_links(results)
    count = plural(sum(len(found) for found in pages.values()), "broken link")
    lines = [f"The weekly link check found {count} among the {len(results)} links of the site's pages.", ""]
    for page, found in pages.items():
        lines += [f"### `{page}`", "", "| Line | Link | Problem |", "| ---: | --- | --- |"]
        lines += [
            f"| {r.get('lineno') or '–'} | `{_cell(r['uri'])}` | {_cell(r.get('info') or r['status'])} |" for r in found
        ]
        lines.append("")
    if run_url:
        lines.append(f"Checked by [this run]({run_url}). The issue is updated each week while it stays open.")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    arguments = report_arguments("linkreport", __doc__, argv, COMMAND_LINE)
    results = read_results(arguments.output)
    arguments.out.write_text(issue_body(results, arguments.run_url), encoding="utf-8")
    broken = sum(len(found) for found in broken_links(results).values())
    print(f"{broken} broken of {len(results)} links checked")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
