"""scale-05 launches worker processes; a killed or hung worker must fail the build at its line.

The lesson's launcher, ``run_workers``, is copied here from lessons/scale-05.md itself
(so the test follows the lesson), into two tiny lessons: one whose worker 1 sleeps
forever, one whose worker 1 is killed with SIGKILL while worker 0 waits for it. Each must
fail the build with exactly one located message, at the line that launched the workers,
raised by the launcher's own timeout (3 s) well before the cell's (30 s), and leave no
worker running.
"""

from __future__ import annotations

import re

import psutil
import pytest
from conftest import ROOT, build, make_site
from tiny import code_cell, lesson, line_of

PROBLEM = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): (?:ERROR|WARNING): (?P<message>.*)$")
#: Every worker script of these lessons lives in a folder whose name starts with this.
MARK = "scale05-test-"


def lesson_helper() -> str:
    """The ``run_workers`` function of lessons/scale-05.md, as its Step 5 defines it."""
    text = (ROOT / "lessons" / "scale-05.md").read_text(encoding="utf-8")
    start = text.index("def run_workers(")
    end = text.index("\n\n\n", start)
    helper = text[start:end]
    assert "timeout" in helper and "kill()" in helper and "raise RuntimeError" in helper
    return helper


IMPORTS = "import signal\nimport socket\nimport subprocess\nimport sys\nimport tempfile\nfrom pathlib import Path\n"


def worker_lesson(name: str, worker: str) -> str:
    """A lesson that defines the launcher in one cell and launches ``worker`` in the next."""
    setup = (
        IMPORTS
        + f"\nfolder = Path(tempfile.mkdtemp(prefix={MARK!r}))\n"
        + f"script = folder / 'worker.py'\nscript.write_text({worker!r})\n\n\n"
        + lesson_helper()
    )
    launch = "print('launching two workers')\nrun_workers(script, 2, timeout=3)\nprint('not reached')"
    body = code_cell(setup) + "\nThe launch:\n\n" + code_cell(launch)
    return lesson(name, body, extra="mystnb:\n  execution_timeout: 30\n")


# Worker 1 never finishes; worker 0 ends at once.
HANGING_WORKER = "import sys\nimport time\n\nif sys.argv[3] == '1':\n    time.sleep(1000)\n"
# Worker 1 is killed as the out-of-memory killer would; worker 0 waits for it, as in initialize.
KILLED_WORKER = (
    "import os\nimport signal\nimport sys\nimport time\n\n"
    "if sys.argv[3] == '1':\n    os.kill(os.getpid(), signal.SIGKILL)\ntime.sleep(1000)\n"
)
CASES = {
    "hanging-worker": (
        worker_lesson("hanging-worker", HANGING_WORKER),
        r"^cell failed: RuntimeError: worker 1 hung: still running after 3 s; stopped worker 1; full traceback: ",
    ),
    "killed-worker": (
        worker_lesson("killed-worker", KILLED_WORKER),
        r"^cell failed: RuntimeError: worker 1 was killed by SIGKILL; stopped worker 0; full traceback: ",
    ),
}


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    root = tmp_path_factory.mktemp("distributed")
    srcdir = make_site(root, lessons={name: text for name, (text, _) in CASES.items()})
    return build(srcdir, "-j", "2", timeout=600)


def problems(result) -> list[re.Match]:
    return [match for line in result.output.splitlines() if (match := PROBLEM.match(line))]


def test_the_build_fails_with_located_messages_only(failed):
    assert failed.returncode != 0
    lines = [line for line in failed.output.splitlines() if line.strip()]
    assert lines and all(PROBLEM.match(line) for line in lines), failed.output
    assert "Traceback" not in failed.output and "CellTimeoutError" not in failed.output, failed.output


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_failed_worker_is_reported_once_at_the_launch(failed, name):
    text, message = CASES[name]
    mine = [match for match in problems(failed) if match["path"].endswith(f"lessons/{name}.md")]
    assert len(mine) == 1, failed.output
    assert re.search(message, mine[0]["message"]), mine[0].group(0)
    assert int(mine[0]["line"]) == line_of(text, "run_workers(script, 2, timeout=3)"), mine[0].group(0)


def test_the_build_ends_within_the_timeouts(failed):
    """Both launches give up after 3 s; the build does not wait for a cell timeout or a worker."""
    assert failed.finished - failed.started < 120, f"the build took {failed.finished - failed.started:.0f} s"


def test_no_worker_is_left_running(failed):
    left = []
    for process in psutil.process_iter(["cmdline"]):
        if any(MARK in part for part in process.info["cmdline"] or []):
            left.append(process.info["cmdline"])
    assert not left, left
