"""Spread execution over machines: run one shard of the executed pages, then assemble the site from all.

``python -m jaxcourse.tools.shards execute --shard K/N --into DIR`` (``nox -s execute``)
executes the pages of shard K of N on this machine and leaves in DIR:

- ``cache/``: a jupyter-cache holding each page's executed notebook, put there by
  myst-nb's own cache execution (``nb_execution_mode=cache`` on an empty cache);
- ``figures/``: the figure files those pages drew;
- ``shard.json``: which pages, and which of their runs were made by this shard.

``python -m jaxcourse.tools.sitebuild OUTDIR --from DIR [DIR...]`` (``nox -s docs -- --from``)
merges the shards' caches with jupyter-cache's public API (:func:`merge_caches`),
copies their figures into the source tree, and builds the site from the cache
without executing a cell (``course_require_recorded``). A page with no recording
fails with one message naming it. The shards' runs count as the build's own
(``course_fresh_runs``), so the stamps, the change report and execution.json read
as after a one-machine build.

Pages are never split: each executes whole, in one kernel, on one shard, with
its own settings (simulated devices, timeout). Shards are balanced by the run
times recorded in the last site's execution.json; a page without one is
estimated from its ``minutes`` in front matter (:func:`page_costs`). Every
shard computes the same plan from the same inputs, so shards need not talk.
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
from .publishing import build_and_publish

SHARD_FILE = "shard.json"


class ShardError(Exception):
    """A shard folder that cannot be assembled, or a shard that cannot be planned."""


def executed_pages(root: Path) -> list[str]:
    """Every executed page of the source tree by docname: the lessons, and the notebooks under docs/."""
    found = [path.relative_to(root).with_suffix("").as_posix() for path in catalogue.lesson_files(root)]
    for path in sorted([*Path(root, "docs").rglob("*.md"), *Path(root, "docs").rglob("*.ipynb")]):
        relative = path.relative_to(root)
        if any(part.startswith(("_", ".")) for part in relative.parts):
            continue
        if executes(path):
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
    recorded: dict[str, float] = {}
    if execution_json is not None and execution_json.is_file():
        rows = json.loads(execution_json.read_text(encoding="utf-8"))
        recorded = {
            row["docname"]: float(row["runtime_seconds"]) for row in rows.values() if row.get("runtime_seconds")
        }
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


def plan(costs: dict[str, float], shards: int) -> list[list[str]]:
    """The pages of each shard: longest first, each to the least loaded shard (ties: lowest shard, name)."""
    bins: list[list[str]] = [[] for _ in range(shards)]
    loads = [0.0] * shards
    for docname in sorted(costs, key=lambda name: (-costs[name], name)):
        target = min(range(shards), key=lambda index: (loads[index], index))
        bins[target].append(docname)
        loads[target] += costs[docname]
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
    mine = plan(page_costs(root, docnames, last_site / "execution.json"), count)[index - 1]
    into.mkdir(parents=True, exist_ok=True)
    for leftover in ("cache", "figures", "site", SHARD_FILE):
        path = into / leftover
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    print(f"Shard {index} of {count}: {len(mine)} of {len(docnames)} pages: {', '.join(mine) or 'none'}")
    if not mine:
        status = 0
        rows: dict = {}
    else:
        site = into / "site"
        status = build_and_publish(
            root,
            site,
            [
                *options,
                # myst-nb's cache execution on an empty cache: every page runs here, and its
                # executed notebook lands in the cache, which the assembly reads.
                "-D", "nb_execution_mode=cache",
                "-D", f"nb_execution_cache_path={(into / 'cache').resolve()}",
                "-D", f"course_only_pages={','.join(mine)}",
                "-D", "course_progress=1",
                "-D", "course_notebooks_dir=",
            ],
        )  # fmt: skip
        if status != 0:
            return status
        rows = json.loads((site / "execution.json").read_text(encoding="utf-8"))
    figures = []
    recordings = into / "site" / "recordings.json"
    recorded_pages = json.loads(recordings.read_text(encoding="utf-8"))["pages"] if recordings.is_file() else {}
    (into / "figures").mkdir()
    for page in recorded_pages.values():
        for name in page.get("figures", {}):
            shutil.copy2(root / "figures" / name, into / "figures" / name)
            figures.append(name)
    fresh = [f"{page_id}@{row['started']}" for page_id, row in rows.items() if row["fresh"] and row["started"]]
    record = {
        "shard": [index, count],
        "pages": mine,
        "fresh_runs": sorted(fresh),
        "figures": sorted(figures),
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    (into / SHARD_FILE).write_text(json.dumps(record, indent=2), encoding="utf-8")
    shutil.rmtree(into / "site", ignore_errors=True)
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
    run = commands.add_parser("execute", help="execute one shard's pages into a folder")
    run.add_argument("--shard", required=True, help="K/N: this machine runs shard K of N")
    run.add_argument("--into", required=True, type=Path, help="the folder for the shard's recordings")
    run.add_argument(
        "--last-site",
        type=Path,
        default=Path("_build/html"),
        help="the last site, whose execution.json balances the shards (default: _build/html)",
    )
    show = commands.add_parser("plan", help="print which pages each of N shards runs")
    show.add_argument("shards", type=int)
    show.add_argument("--last-site", type=Path, default=Path("_build/html"))
    arguments, options = parser.parse_known_args(argv)
    root = Path.cwd()
    try:
        if arguments.command == "plan":
            docnames = executed_pages(root)
            costs = page_costs(root, docnames, arguments.last_site / "execution.json")
            for number, pages in enumerate(plan(costs, arguments.shards), start=1):
                load = sum(costs[page] for page in pages)
                print(f"shard {number}/{arguments.shards} (~{load:.0f} s): {' '.join(pages)}")
            return 0
        return execute(root, arguments.shard, arguments.into.resolve(), arguments.last_site, options)
    except ShardError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
