"""The "Recorded reference execution" transcript: everything a lesson's cells showed, collapsed."""

from __future__ import annotations

from docutils import nodes

from ..execution import record
from . import stamps
from .placeholders import recorded_run


def transcript_summary(kernel: record.KernelRecord) -> str:
    stamp = kernel.stamp
    lines = "".join(kernel.transcript).splitlines()
    last = lines[-1] if lines else ""
    parts = [f"{stamps.backend_name(stamp)} run at {stamps.stamp_time(stamp)}", f"JAX {stamp['jax']}"]
    if stamps.devices_text(stamp):
        parts.append(stamps.devices_text(stamp))
    parts.append(f"{len(lines)} printed line{'s' if len(lines) != 1 else ''}, ending with {last}")
    return "Transcript: " + " · ".join(parts)


def fill_recorded_runs(doctree: nodes.document, kernel: record.KernelRecord, succeeded: bool) -> None:
    for placeholder in list(doctree.findall(recorded_run)):
        if not succeeded or kernel.stamp is None:
            replacement = [nodes.paragraph("", "This lesson did not run to completion in this build.")]
        else:
            # Collapsed behind its summary: the transcript holds the answers to the experiments
            # and exercises that follow it on the page.
            box = nodes.admonition(classes=["dropdown", "recorded-run"])
            box += nodes.title("", transcript_summary(kernel))
            transcript = "".join(kernel.transcript)
            box += nodes.literal_block(transcript, transcript, classes=["recorded-transcript"], language="none")
            replacement = [box]
        placeholder.replace_self(replacement)
