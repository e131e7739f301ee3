"""Rosetta: multilingual document ingestion for retrieval, one module per stage."""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache
from pathlib import Path

__version__ = "0.1.0"


@lru_cache(maxsize=1)
def pipeline_version() -> str:
    """The code version stamped on every chunk: ROSETTA_PIPELINE_VERSION (set in container
    images), else the git commit of the checkout, else the package version."""
    if env := os.environ.get("ROSETTA_PIPELINE_VERSION"):
        return env
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
        if out.returncode == 0 and out.stdout.strip():
            return f"git-{out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        pass
    return __version__
