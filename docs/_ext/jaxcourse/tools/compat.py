"""Which JAX versions the course runs on: the verdicts of ``nox -s compat``.

``nox -s compat -- 0.10.1 0.10.0`` builds the course once per version, in an environment of its own, from a copy
of the sources, with ``python -m jaxcourse.tools.compat pin``, ``copy`` and ``record`` (:func:`verdicts`, merged into
``_build/compat.json``, which the site shows). The Pages workflow joins one file per version with ``merge``, and
lists the newest releases on PyPI for its matrix with ``versions``. ``compat.json`` reads ``{"<jax version>":
{"<page id>": {"status": "pass" | "fail", "where": "<file>:<line>", "message": ..., "changed_outputs": <n>}}}``,
with "where" and "message" for a failure only, and the outputs that differ from the current site's recordings.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

from . import read_json
from .publishing import sibling

JAX_PIN = re.compile(r"^(jax|jaxlib)==\S+", re.M)
#: The in-place install of the course extension, relative to the checkout.
EXTENSION_PIN = re.compile(r"^-e (\./\S+)$", re.M)
#: How Sphinx writes a located problem into its warnings file.
LOCATED = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+): (?:WARNING|ERROR|CRITICAL): (?P<message>.*)$")
#: What a message carries that only makes sense on the machine that built: the saved traceback, the warning type.
MACHINE_DETAILS = re.compile(r"; full traceback: \S+| \[[\w.-]+\]$")
#: What a compatibility build copies: everything a build reads, nothing it writes.
NOT_SOURCES = shutil.ignore_patterns(".git", ".nox", "_build", "__pycache__", "*.egg-info", ".ruff_cache")


class CompatError(Exception):
    """A version that cannot be pinned, or a build that left nothing to read."""


def version_key(version: str) -> tuple:
    """Sort versions numerically: 0.10.10 after 0.10.2."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"[.+-]", version))


def pinned_requirements(text: str, version: str, checkout: Path) -> str:
    """``text`` (requirements.txt) with jax and jaxlib at ``version``; the in-place package made absolute."""
    found = {match.group(1) for match in JAX_PIN.finditer(text)}
    if found != {"jax", "jaxlib"}:
        raise CompatError(
            f"requirements.txt must pin both jax and jaxlib with ==; it pins {sorted(found) or 'neither'}"
        )
    text = JAX_PIN.sub(lambda match: f"{match.group(1)}=={version}", text)
    return EXTENSION_PIN.sub(lambda match: f"-e {(checkout / match.group(1)).resolve()}", text)


def copy_sources(checkout: Path, target: Path) -> None:
    """Copy the sources (lessons, docs, figures, conf.py) to ``target``, leaving builds and environments out."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(checkout, target, ignore=NOT_SOURCES, symlinks=True)


def _first_problems(warnings_log: Path, srcdir: Path) -> dict[str, tuple[str, str]]:
    """The first located problem of each source file: relative path -> ("<file>:<line>", message)."""
    found: dict[str, tuple[str, str]] = {}
    text = warnings_log.read_text(encoding="utf-8") if warnings_log.is_file() else ""
    for match in filter(None, map(LOCATED.match, text.splitlines())):
        path = Path(match["path"])
        relative = (path.relative_to(srcdir) if path.is_absolute() and path.is_relative_to(srcdir) else path).as_posix()
        message = MACHINE_DETAILS.sub("", match["message"]).removeprefix("cell failed: ")
        found.setdefault(relative, (f"{relative}:{match['line']}", message))
    return found


def verdicts(site: Path, srcdir: Path) -> dict[str, dict]:
    """Each executed page's verdict from a build into ``site`` (published, or failed and left in site.new)."""
    from . import shards

    staging = sibling(site, ".new")
    rows = read_json((staging if staging.is_dir() else site) / "execution.json", {})
    problems = _first_problems(sibling(site, ".warnings.log"), srcdir)
    report = read_json(site.parent / "changes.json", {"pages": {}})
    by_docname = {row["docname"]: (page_id, row) for page_id, row in rows.items()}
    result: dict[str, dict] = {}
    for docname in shards.executed_pages(srcdir):
        page_id, row = by_docname.get(docname, (docname.removeprefix("lessons/"), None))
        source = f"{docname}.md"
        verdict: dict = {"status": "pass"}
        if row is None or not row["succeeded"] or source in problems:
            where, message = problems.get(source, (f"{source}:1", "the build stopped before this page ran"))
            verdict = {"status": "fail", "where": where, "message": message}
        verdict["changed_outputs"] = len(report["pages"].get(page_id, {}).get("outputs", []))
        result[page_id] = verdict
    if not result:
        raise CompatError(f"{srcdir} has no executed pages")
    return result


def merge(out: Path, results: dict[str, dict]) -> dict:
    """Add ``results`` (version -> page -> verdict) to the file ``out``, versions in order; the whole."""
    data = read_json(out, {}) | results
    data = {version: data[version] for version in sorted(data, key=version_key)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return data


def newest_releases(releases: list[str], count: int, pinned: str | None = None) -> list[str]:
    """The ``count`` newest final releases (no rc, dev or post), plus the pinned one if older."""
    finals = sorted((v for v in releases if re.fullmatch(r"\d+(\.\d+)*", v)), key=version_key)
    chosen = finals[-count:]
    if pinned and pinned not in chosen:
        chosen.insert(0, pinned)
    return chosen


def summary(results: dict[str, dict]) -> str:
    lines = []
    for version, pages in results.items():
        failed = {page: v for page, v in pages.items() if v["status"] == "fail"}
        lines.append(f"JAX {version}: {len(pages) - len(failed)} of {len(pages)} pages pass")
        lines += [f"  FAIL {page}: {v['where']}: {v['message']}" for page, v in failed.items()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.tools.compat", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pin = commands.add_parser("pin", help="write requirements.txt with jax and jaxlib at VERSION")
    pin.add_argument("version")
    pin.add_argument("out", type=Path)
    copy = commands.add_parser("copy", help="copy the sources to build into a folder")
    copy.add_argument("target", type=Path)
    record = commands.add_parser("record", help="add the verdicts of a build to compat.json")
    record.add_argument("version")
    record.add_argument("site", type=Path, help="the site folder the build wrote (or failed to)")
    record.add_argument("out", type=Path, help="compat.json")
    join = commands.add_parser("merge", help="join compat.json files (one per version) into one")
    join.add_argument("out", type=Path)
    join.add_argument("parts", type=Path, nargs="+")
    newest = commands.add_parser("versions", help="print the newest JAX releases on PyPI as a JSON list")
    newest.add_argument("--count", type=int, default=3)
    arguments = parser.parse_args(argv)
    checkout = Path.cwd()
    try:
        if arguments.command == "pin":
            text = (checkout / "requirements.txt").read_text(encoding="utf-8")
            arguments.out.parent.mkdir(parents=True, exist_ok=True)
            arguments.out.write_text(pinned_requirements(text, arguments.version, checkout), encoding="utf-8")
        elif arguments.command == "copy":
            copy_sources(checkout, arguments.target)
        elif arguments.command == "record":
            site = arguments.site.resolve()
            srcdir = site.parent / "src"
            results = {arguments.version: verdicts(site, srcdir if srcdir.is_dir() else checkout)}
            merge(arguments.out, results)
            print(summary(results))
        elif arguments.command == "merge":
            for part in arguments.parts:
                merge(arguments.out, json.loads(part.read_text(encoding="utf-8")))
        elif arguments.command == "versions":
            from urllib.request import urlopen  # the workflow's network; builds never call this

            with urlopen("https://pypi.org/pypi/jax/json", timeout=60) as response:  # noqa: S310
                releases = list(json.load(response)["releases"])
            text = (checkout / "requirements.txt").read_text(encoding="utf-8")
            pinned = re.search(r"^jax==(\S+)", text, re.M)
            print(json.dumps(newest_releases(releases, arguments.count, pinned and pinned.group(1))))
    except CompatError as error:
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
