"""One writer of the live collection at a time, across processes and containers.

An erasure copies the live collection away, drops it and copies it back
(pipeline/batch/erasure.py): a promotion, a rollback or a ``rosetta pairs`` rewrite that
wrote in between would be dropped with it, or copied back over. Each of them holds this lock
while it writes. It is an ``flock`` on ``data_root/live.lock``, the folder every task and
container shares: the kernel releases it when its holder dies, so a crash leaves no stale
lock to clear. A writer that finds it held waits (an erasure takes seconds to minutes) and
says for whom.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from pipeline.config import Settings

log = logging.getLogger(__name__)
# past this, the holder is more likely hung than slow: the waiting task fails and its retry waits again
WAIT_S = 3600.0


def lock_path(settings: Settings) -> Path:
    return settings.data_root / "live.lock"


@contextmanager
def live_writes(settings: Settings, what: str, wait_s: float = WAIT_S, poll_s: float = 0.5) -> Iterator[None]:
    """Hold the live collection's write lock while ``what`` (words for the messages) writes."""
    path = lock_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        started = time.monotonic()
        said = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another writer"
                if time.monotonic() - started >= wait_s:
                    raise TimeoutError(f"{what}: the live collection has been held by {holder} for over "
                                       f"{wait_s:.0f} s ({path}); run it again once that has finished") from None
                if not said:
                    log.warning("%s waits: the live collection is held by %s", what, holder)
                    said = True
                time.sleep(poll_s)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{what} (pid {os.getpid()} on {socket.gethostname()}, since "
                         f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC)\n")
            handle.flush()
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
