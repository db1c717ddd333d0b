"""The run stamp as readers see it: when and where a page's kernel ran, in one format everywhere.

The kernel takes the stamp (``runtime.begin``, completed by ``runtime.finish``); these functions format it,
and decide whether this build's own kernel took it. Nothing here imports Sphinx.
"""

from __future__ import annotations

import datetime
import time

# When this build started (builder-inited, in the main process; parallel readers inherit it), and the
# runs its shards made on other machines, which count as its own (an assembly: nox -s docs -- --from).
_build: dict = {"started": time.time(), "shard_runs": frozenset()}

REUSE_REASON = "from the execution cache: its code and the build environment are unchanged since that run"


def note_build_start(app=None) -> None:
    _build["started"] = time.time()
    _build["shard_runs"] = frozenset(app.config.course_fresh_runs) if app is not None else frozenset()


def run_key(stamp: dict) -> str:
    """'<page id>@<start time>': one run of one page, as nox -s execute lists its fresh runs."""
    return f"{stamp.get('page')}@{stamp_iso(stamp)}"


def stamp_seconds(stamp: dict) -> float:
    return datetime.datetime.fromisoformat(stamp["started"]).timestamp()


def ran_in_this_build(stamp: dict | None) -> bool:
    """Whether this build's own kernel, or one of its shards', took the stamp (else the recording came
    from a cache)."""
    if stamp is None:
        return False
    if stamp_seconds(stamp) >= _build["started"]:
        return True
    return bool(_build["shard_runs"]) and run_key(stamp) in _build["shard_runs"]


def stamp_time(stamp: dict) -> str:
    """The run's start, to the second, in UTC: '2026-12-01 19:22:07 UTC'."""
    return datetime.datetime.fromisoformat(stamp["started"]).astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def stamp_iso(stamp: dict) -> str:
    """The run's start to the second as ISO 8601, for data files (execution.json, recordings.json)."""
    return datetime.datetime.fromisoformat(stamp["started"]).astimezone(datetime.UTC).isoformat(timespec="seconds")


def backend_name(stamp: dict) -> str:
    """'CPU': the backend the run computed on (every build pins JAX to the CPU)."""
    return str(stamp.get("backend") or "cpu").upper()


def devices_text(stamp: dict) -> str | None:
    """'8 simulated CPU devices' for a page that asked for them, else None."""
    if not stamp.get("simulated_devices"):
        return None
    count = stamp.get("device_count", 1)
    return f"{count} simulated {backend_name(stamp)} device{'s' if count != 1 else ''}"


def stamp_text(stamp: dict, fresh: bool) -> str:
    where = f"on {backend_name(stamp)} at {stamp_time(stamp)}"
    parts = [f"Executed by this build {where}" if fresh else f"Recorded {where}, reused by this build {REUSE_REASON}"]
    if devices_text(stamp):
        parts.append(devices_text(stamp))
    parts += [f"JAX {stamp['jax']}", f"jaxlib {stamp['jaxlib']}", f"Python {stamp['python']}"]
    return " · ".join(parts)
