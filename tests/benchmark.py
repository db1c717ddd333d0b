"""Build benchmark, run by `nox -s bench`: prints the figures and writes them as JSON.

Everything is measured in one run on this machine, in a temporary copy of the
sources, so the working tree and its _build/ are never touched:

a. fresh build wall time (every lesson re-executed, parallel);
b. each lesson's code run alone as a plain Python script (sum and max);
c. a / sum(b) and a / max(b);
d. a rebuild with no change: wall time and kernels started;
e. a rebuild after a prose-only edit: wall time and kernels started;
f. peak memory of the fresh build (resident set of sphinx-build and its kernels);
g. consecutive parallel fresh builds that succeeded.

Times are medians over --repeats runs where a run is cheap enough to repeat.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from jaxcourse.source import catalogue, frontmatter, lessonsource
from jaxcourse.tools.publishing import sphinx_command

ROOT = Path(__file__).resolve().parent.parent


def lessons_executed(outdir: Path, since: float) -> int:
    """Lessons whose run stamp, taken inside the kernel, is newer than the build's start."""
    report = outdir / "execution.json"
    if not report.exists():
        return 0
    runs = json.loads(report.read_text(encoding="utf-8")).values()
    return sum(datetime.datetime.fromisoformat(run["stamp"]["started"]).timestamp() >= since for run in runs)


def copy_sources(destination: Path) -> Path:
    destination.mkdir(parents=True)
    for name in ("conf.py", "requirements.txt"):
        shutil.copy(ROOT / name, destination / name)
    for folder in ("docs", "lessons", "figures"):
        shutil.copytree(ROOT / folder, destination / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def run_build(srcdir: Path, outdir: Path, *options: str) -> dict:
    """One sphinx-build; wall time, exit status, kernels started and peak memory of its process tree."""
    command = sphinx_command(Path("."), outdir, *options)
    since = time.time()
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=srcdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0]

    def watch() -> None:
        parent = psutil.Process(process.pid)
        while process.poll() is None:
            try:
                tree = [parent, *parent.children(recursive=True)]
                peak[0] = max(peak[0], sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    output, _ = process.communicate()
    elapsed = time.perf_counter() - started
    watcher.join()
    return {
        "seconds": elapsed,
        "returncode": process.returncode,
        "kernels": lessons_executed(outdir, since),
        "peak_rss_mib": peak[0] / 2**20,
        "output": output,
    }


def lesson_script(path: Path, figures: Path, cells: Path) -> str:
    """The lesson's executed code as one script, including what the build adds.

    Each cell runs with exec() in the script's globals, as the kernel runs it; a cell
    given ':raises:' must raise, one tagged raises-exception may, and the script goes on, as the build does.
    Each cell's code is a file in ``cells``, so that a traceback shows its lines, as
    IPython's does (a lesson may read them, as practice-01 does).
    """
    cells.mkdir(parents=True, exist_ok=True)
    front, _ = frontmatter.read_lesson(path)
    cpu_devices = front.lesson.get("cpu_devices") if front else None
    lines = [
        "from jaxcourse import runtime",
        f"runtime.begin({path.stem!r}, figures_dir={str(figures)!r}, environment='bench', cpu_devices={cpu_devices!r})",
    ]
    for number, cell in enumerate(lessonsource.parse(path.read_text(encoding="utf-8")).code_cells()):
        cell_file = cells / f"{path.stem.replace('-', '_')}_cell_{number}.py"
        cell_file.write_text(cell.code, encoding="utf-8")
        code = f"exec(compile(open({str(cell_file)!r}).read(), {str(cell_file)!r}, 'exec'), globals())"
        if cell.options.get("raises") or "raises-exception" in cell.tags:
            lines += ["try:", f"    {code}", "except Exception:", "    pass"]
            if cell.options.get("raises"):
                lines += ["else:", "    raise SystemExit('no exception')"]
        else:
            lines.append(code)
    return "\n".join([*lines, "runtime.finish()", ""])


def time_scripts(lessons: list[Path], scratch: Path) -> dict[str, float]:
    seconds = {}
    for path in lessons:
        script = scratch / f"{path.stem.replace('-', '_')}.py"
        script.write_text(lesson_script(path, scratch / "figures", scratch / "cells"), encoding="utf-8")
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, str(script)],
            cwd=path.parent,
            capture_output=True,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
        )
        seconds[path.stem] = time.perf_counter() - started
        if result.returncode != 0 or f"PASS: {path.stem}" not in result.stdout:
            raise SystemExit(f"{path.stem} failed as a plain script:\n{result.stdout}\n{result.stderr}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", default="auto", help="sphinx-build -j value for the fresh builds")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measured quantity (medians)")
    parser.add_argument("--parallel-builds", type=int, default=10, help="consecutive fresh builds for (g)")
    parser.add_argument("--output", default=str(ROOT / "_build" / "bench.json"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="course-bench-") as scratch_name:
        scratch = Path(scratch_name)
        srcdir = copy_sources(scratch / "site")
        lessons = catalogue.lesson_files(srcdir)
        parallel = ("-j", args.jobs, "-D", "nb_execution_mode=force")

        # Like nox -s docs, each fresh build may order its work by an earlier build's run times
        # (course_runtime_hints); an untimed first build provides them.
        priming = scratch / "priming" / "html"
        hints = ("-D", f"course_runtime_hints={priming / 'execution.json'}")
        run_build(srcdir, priming, "-E", *parallel)
        fresh = [
            run_build(srcdir, scratch / f"fresh-{i}" / "html", "-E", *parallel, *hints) for i in range(args.repeats)
        ]
        for run in fresh:
            if run["returncode"]:
                raise SystemExit("fresh build failed:\n" + run["output"])
        script_runs = [time_scripts(lessons, scratch) for _ in range(args.repeats)]
        per_lesson = {name: statistics.median(run[name] for run in script_runs) for name in script_runs[0]}

        cached = scratch / "cached" / "html"
        first = run_build(srcdir, cached, "-D", "nb_execution_mode=cache")
        unchanged = [run_build(srcdir, cached, "-D", "nb_execution_mode=cache") for _ in range(args.repeats)]
        prose = []
        target = srcdir / "lessons" / "transforms-04.md"
        for index in range(args.repeats):
            text = target.read_text(encoding="utf-8")
            target.write_text(
                text.replace("## The problem\n", f"## The problem\n\nEdit {index}.\n", 1), encoding="utf-8"
            )
            prose.append(run_build(srcdir, cached, "-D", "nb_execution_mode=cache"))

        attempts = [
            run_build(srcdir, scratch / f"parallel-{i}" / "html", "-E", *parallel, *hints)
            for i in range(args.parallel_builds)
        ]

    a = statistics.median(run["seconds"] for run in fresh)
    b_sum, b_max = sum(per_lesson.values()), max(per_lesson.values())
    figures = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "lessons": len(per_lesson),
        "repeats": args.repeats,
        "a_fresh_build_seconds": a,
        "a_fresh_build_kernels": fresh[0]["kernels"],
        "b_script_seconds": per_lesson,
        "b_sum_seconds": b_sum,
        "b_max_seconds": b_max,
        "c_a_over_sum_b": a / b_sum,
        "c_a_over_max_b": a / b_max,
        "d_no_change_rebuild_seconds": statistics.median(run["seconds"] for run in unchanged),
        "d_no_change_rebuild_kernels": max(run["kernels"] for run in unchanged),
        "e_prose_edit_rebuild_seconds": statistics.median(run["seconds"] for run in prose),
        "e_prose_edit_rebuild_kernels": max(run["kernels"] for run in prose),
        "e_prose_edit_all_succeeded": all(run["returncode"] == 0 for run in prose + unchanged + [first]),
        "f_peak_memory_mib": max(run["peak_rss_mib"] for run in fresh),
        "g_parallel_builds_succeeded": sum(run["returncode"] == 0 for run in attempts),
        "g_parallel_builds_attempted": len(attempts),
        "g_failures": [run["output"][-2000:] for run in attempts if run["returncode"]],
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(figures, indent=2), encoding="utf-8")
    for key, value in figures.items():
        if key != "g_failures":
            print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
