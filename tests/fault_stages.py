"""A stand-in for a document stage that misbehaves on purpose, by file name: ``hang*`` spins
in native code (a backtracking pattern inside ``re``, which holds the GIL and ignores
signals), ``hog*`` eats memory, ``crash*`` raises the ValueError pdfplumber raised on a real
table crop; any other document goes through the real extract stage. Its ``warm`` leaves
``warmed-<pid>`` in the data root, or fails where a ``warm-fails`` file is there. Tests put it in the
stage table's place for one stage (``dataclasses.replace(stage, module="fault_stages")``);
the stage worker imports it by name.
"""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.config import Settings
from pipeline.contracts import DocRef, StageResult
from pipeline.progress import mark_page
from pipeline.stages import extract
from pipeline.workspace import Workspace

HOG_STEP = 64 << 20


def warm(settings: Settings) -> None:
    import os

    if (settings.data_root / "warm-fails").exists():
        raise RuntimeError("the model file is missing")
    (settings.data_root / f"warmed-{os.getpid()}").touch()


def run(ref: DocRef, settings: Settings) -> StageResult:
    name = Path(Workspace(settings, ref.batch_id).source_path(ref.doc_id)).name
    if name.startswith("hang"):
        mark_page(2)
        re.match(r"(a+)+$", "a" * 64 + "!")  # 2**64 steps
    if name.startswith("hog"):
        held = []
        while True:
            held.append(b"\x01" * HOG_STEP)  # written, so resident at once
    if name.startswith("crash"):
        raise ValueError("Bounding box (0, 0, 612, 800) is not fully within parent page bounding box (0, 0, 612, 792)")
    return extract.run(ref, settings)
