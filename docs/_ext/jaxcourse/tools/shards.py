"""Spread execution over machines: run one shard of the executed pages, then assemble the site from all.

``python -m jaxcourse.tools.shards execute --shard K/N --into DIR`` (``nox -s execute``) executes shard K of N with
myst-nb's cache execution and leaves in DIR the executed notebooks (``cache/``), their figures and ``shard.json``.
``python -m jaxcourse.tools.sitebuild OUTDIR --from DIR...`` builds the site from those, executing nothing
(:func:`assembly_options`). Pages are never split, nor a page from those it pastes glued values from; shards are
balanced by recorded run times or front matter
``minutes`` (:func:`page_costs`), and every shard computes the same plan, so shards need not talk.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import sys
from pathlib import Path

from ..source import catalogue, frontmatter
from ..source.pagesource import executes
from . import read_json
from .publishing import build_and_publish, remove

SHARD_FILE = "shard.json"


class ShardError(Exception):
    """A shard folder that cannot be assembled, or a shard that cannot be planned."""


def executed_pages(root: Path) -> list[str]:
    """Every executed page of the source tree by docname: the lessons, and the notebooks under docs/."""
    found = [path.relative_to(root).with_suffix("").as_posix() for path in catalogue.lesson_files(root)]
    for path in sorted([*Path(root, "docs").rglob("*.md"), *Path(root, "docs").rglob("*.ipynb")]):
        relative = path.relative_to(root)
        if not any(part.startswith(("_", ".")) for part in relative.parts) and executes(path):
            found.append(relative.with_suffix("").as_posix())
    return sorted(found)


def study_minutes(path: Path) -> float | None:
    """A lesson's 'minutes:' from its front matter; None for a page without one."""
    try:
        front = frontmatter.parse(path.read_text(encoding="utf-8"))
        return float((front.lesson or {}).get("minutes"))
    except (frontmatter.FrontMatterError, TypeError, ValueError):
        return None


def page_costs(root: Path, docnames: list[str], execution_json: Path | None) -> dict[str, float]:
    """Each page's expected run time: recorded by the last site, else estimated.

    The estimate scales a page's ``minutes`` by the seconds per minute of the pages
    that have both; with no recording at all, minutes alone rank the pages. A page
    with neither costs the median of the others.
    """
    rows = read_json(execution_json, {}) if execution_json is not None else {}
    recorded = {row["docname"]: float(row["runtime_seconds"]) for row in rows.values() if row.get("runtime_seconds")}
    minutes = {docname: study_minutes(Path(root, docname + ".md")) for docname in docnames}
    both = [docname for docname in docnames if docname in recorded and minutes[docname]]
    seconds_per_minute = sum(recorded[d] for d in both) / sum(minutes[d] for d in both) if both else 1.0
    costs = {
        docname: recorded[docname] if docname in recorded else minutes[docname] * seconds_per_minute
        for docname in docnames
        if docname in recorded or minutes[docname]
    }
    fallback = statistics.median(costs.values()) if costs else 1.0
    return {docname: costs.get(docname, fallback) for docname in docnames}


def run_together(root: Path, docnames: list[str]) -> list[tuple[str, ...]]:
    """The pages that must run in one build: a page and the pages it pastes glued values from (or they from it)."""
    group_of = {docname: frozenset([docname]) for docname in docnames}
    for docname in docnames:
        for other in catalogue.pasted_from(root, docname):
            if other in group_of:
                merged = group_of[docname] | group_of[other]
                group_of.update(dict.fromkeys(merged, merged))
    return sorted({tuple(sorted(group)) for group in group_of.values()})


def plan(costs: dict[str, float], shards: int, together: list[tuple[str, ...]] | None = None) -> list[list[str]]:
    """The pages of each shard: longest first, each to the least loaded shard (ties: lowest shard, name).

    A group of ``together`` goes whole to one shard, at the cost of its pages.
    """
    groups = together or [(docname,) for docname in costs]
    cost = {group[0]: sum(costs[docname] for docname in group) for group in groups}
    bins: list[list[str]] = [[] for _ in range(shards)]
    loads = [0.0] * shards
    for group in sorted(groups, key=lambda group: (-cost[group[0]], group[0])):
        target = min(range(shards), key=lambda index: (loads[index], index))
        bins[target] += group
        loads[target] += cost[group[0]]
    return [sorted(pages) for pages in bins]


def parse_shard(text: str) -> tuple[int, int]:
    """'2/3' -> (2, 3); ShardError for anything else."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"--shard takes K/N, such as 1/2, not {text!r}") from None
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text}: K must be between 1 and N")
    return index, count


def execute(root: Path, shard: str, into: Path, last_site: Path, options: list[str]) -> int:
    """Execute one shard's pages into ``into`` (see the module docstring); the build's exit status."""
    index, count = parse_shard(shard)
    docnames = executed_pages(root)
    costs = page_costs(root, docnames, last_site / "execution.json")
    mine = plan(costs, count, run_together(root, docnames))[index - 1]
    into.mkdir(parents=True, exist_ok=True)
    for leftover in ("cache", "figures", "site", SHARD_FILE):
        remove(into / leftover)
    print(f"Shard {index} of {count}: {len(mine)} of {len(docnames)} pages: {', '.join(mine) or 'none'}")
    site = into / "site"
    rows: dict = {}
    if mine:
        status = build_and_publish(
            root,
            site,
            [
                *options,
                # myst-nb's cache execution on an empty cache: every page runs here, and its
                # executed notebook lands in the cache, which the assembly reads.
                "-D", "nb_execution_mode=cache",
                "-D", f"nb_execution_cache_path={(into / 'cache').resolve()}",
                "-D", "course_progress=1",
                "-D", "course_notebooks_dir=",
            ],
            pages=tuple(mine),
        )  # fmt: skip
        if status != 0:
            return status
        rows = json.loads((site / "execution.json").read_text(encoding="utf-8"))
    recorded_pages = read_json(site / "recordings.json", {"pages": {}})["pages"]
    figures = sorted(name for page in recorded_pages.values() for name in page.get("figures", {}))
    (into / "figures").mkdir()
    for name in figures:
        shutil.copy2(root / "figures" / name, into / "figures" / name)
    fresh = [f"{page_id}@{row['started']}" for page_id, row in rows.items() if row["fresh"] and row["started"]]
    record = {
        "shard": [index, count],
        "pages": mine,
        "fresh_runs": sorted(fresh),
        "figures": figures,
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    (into / SHARD_FILE).write_text(json.dumps(record, indent=2), encoding="utf-8")
    shutil.rmtree(site, ignore_errors=True)
    return 0


def read_shard(folder: Path) -> dict:
    path = folder / SHARD_FILE
    if not path.is_file():
        raise ShardError(f"{folder} is not a shard's folder: it has no {SHARD_FILE} (nox -s execute writes one)")
    return json.loads(path.read_text(encoding="utf-8"))


def merge_caches(sources: list[Path], target: Path) -> int:
    """Copy every executed notebook of the ``sources`` caches into a new cache at ``target``; how many."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    shutil.rmtree(target, ignore_errors=True)
    merged = get_cache(target)
    count = 0
    for source in sources:
        cache = get_cache(source)
        for record in cache.list_cache_records():
            bundle = cache.get_cache_bundle(record.pk)
            # The run's data (myst-nb keeps its run time there) travels with the notebook.
            copy = CacheBundleIn(bundle.nb, record.uri, artifacts=bundle.artifacts, data=dict(record.data))
            merged.cache_notebook_bundle(copy, check_validity=False, overwrite=True)
            count += 1
    return count


def assembly_options(root: Path, folders: list[Path], cache: Path) -> list[str]:
    """Sphinx options that build the site from the shards in ``folders``, executing nothing."""
    shards = [read_shard(folder) for folder in folders]
    merge_caches([folder / "cache" for folder in folders], cache)
    for folder, shard in zip(folders, shards, strict=True):
        for name in shard["figures"]:
            shutil.copy2(folder / "figures" / name, root / "figures" / name)
    fresh = sorted(run for shard in shards for run in shard["fresh_runs"])
    options = [
        "-D", "nb_execution_mode=cache",
        "-D", f"nb_execution_cache_path={cache.resolve()}",
        "-D", "course_require_recorded=1",
    ]  # fmt: skip
    if fresh:
        options += ["-D", f"course_fresh_runs={','.join(fresh)}"]
    return options


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.tools.shards", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    last_site = argparse.ArgumentParser(add_help=False)
    last_site.add_argument(
        "--last-site",
        type=Path,
        default=Path("_build/html"),
        help="the last site, whose execution.json balances the shards (default: _build/html)",
    )
    run = commands.add_parser("execute", parents=[last_site], help="execute one shard's pages into a folder")
    run.add_argument("--shard", required=True, help="K/N: this machine runs shard K of N")
    run.add_argument("--into", required=True, type=Path, help="the folder for the shard's recordings")
    show = commands.add_parser("plan", parents=[last_site], help="print which pages each of N shards runs")
    show.add_argument("shards", type=int)
    arguments, options = parser.parse_known_args(argv)
    root = Path.cwd()
    try:
        if arguments.command == "plan":
            docnames = executed_pages(root)
            costs = page_costs(root, docnames, arguments.last_site / "execution.json")
            together = run_together(root, docnames)
            for number, pages in enumerate(plan(costs, arguments.shards, together), start=1):
                load = sum(costs[page] for page in pages)
                print(f"shard {number}/{arguments.shards} (~{load:.0f} s): {' '.join(pages)}")
            return 0
        return execute(root, arguments.shard, arguments.into.resolve(), arguments.last_site, options)
    except ShardError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
