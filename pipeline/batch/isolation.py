"""Per-document stages in a worker process that can be killed: the deadline and the memory cap.

One long-lived worker per process (spawned, so it shares no threads or sockets with Airflow
or the Weaviate client) runs stage after stage; the models a stage loads (fastText, USE,
rapidocr) stay loaded in it between documents, as they would in-process. The parent waits
for each answer and polls the worker's resident memory; past the deadline or the cap it
kills the worker (SIGKILL stops runaway Python and native code alike, e.g. a regular
expression backtracking inside ``re``) and the next call starts a fresh one.

Protocol over a pipe: the parent may first send ``("warm", stages, settings)``, which imports
the stages and runs their ``warm(settings)`` (models loaded) with no answer, so a worker started
early loads them while the parent does other work; then ``(stage, ref, settings)``, which the
worker answers
``("started", pages)`` once the stage module is imported (the deadline starts then:
``limits.base_s + limits.per_page_s * pages``), then ``("ok", result)``,
``("document_error", reason, detail)`` or ``("error", summary, traceback)``.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pipeline.config import LimitsConfig, Settings
from pipeline.contracts import DocRef, DocumentError, StageResult
from pipeline.stages import Stage

log = logging.getLogger(__name__)
POLL_S = 0.1
HEARTBEAT_S = 30  # how often a waiting parent says the batch is alive (pipeline.batch.recovery)


@dataclass(frozen=True)
class Outcome:
    """What became of one document-stage in the worker: a result, or why it has none."""

    result: StageResult | None = None
    reason: str | None = None  # a quarantine reason: stage_timeout, too_large, stage_error, or a DocumentError's
    detail: str = ""
    traceback: str = ""
    peak_rss_mib: float = 0.0  # of the process that ran the stage, as polled


def rss_mib(pid: int) -> float:
    """Resident memory of a process, from /proc (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def one_line(error: BaseException) -> str:
    """``Type: message (file:line)`` of an exception, on one line."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message[:300]}{where}" if message else f"{type(error).__name__}{where}"


def page_count(settings: Settings, ref: DocRef) -> int | None:
    """The source document's page count, for its deadline, its embedded PDFs' pages included
    (None when it is not a readable PDF)."""
    from pipeline.workspace import Workspace

    try:
        from pipeline.extraction.attachments import embedded_page_count
        from pipeline.extraction.pdf import pdfium_document
        from pipeline.stores import secrets

        source = Workspace(settings, ref.batch_id).source_path(ref.doc_id)
        pdf, _ = pdfium_document(Path(source), secrets.pdf_passwords(settings))
        try:
            return len(pdf) + embedded_page_count(pdf)
        finally:
            pdf.close()
    except Exception:
        return None


def die_with_parent() -> None:
    """Linux: the kernel kills this process when its parent dies (kill -9 included)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _serve(conn, page) -> None:
    """The worker's loop: one document-stage per message until the parent goes away."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    from pipeline import progress

    progress.attach(page)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == "warm":
            _warm(*message[1:])
            continue
        stage, ref, settings = message
        page.value = 0
        try:
            module = stage.load()
            conn.send(("started", page_count(settings, ref)))
            conn.send(("ok", module.run(ref, settings)))
        except DocumentError as error:
            conn.send(("document_error", error.reason, error.detail))
        except Exception as error:  # reported to the parent, which decides: retry or quarantine
            conn.send(("error", one_line(error), traceback.format_exc()))


def _warm(stages: list[Stage], settings: Settings) -> None:
    for stage in stages:
        try:
            warm = getattr(stage.load(), "warm", None)
            if warm is not None:
                warm(settings)
        except Exception as error:  # the stage itself will meet it again, and report it
            log.warning("warming %s up failed: %s", stage.name, one_line(error))


@contextmanager
def _main_script_hidden():
    """Keep a spawned child from running the parent's main script again: it needs only this
    module. Under an Airflow worker (Celery or Local executor) that script is Airflow's CLI,
    which in a task process dies on the blocked metadata-DB URL Airflow gives tasks."""
    main = sys.modules["__main__"]
    path = main.__dict__.pop("__file__", None)
    try:
        yield
    finally:
        if path is not None:
            main.__file__ = path


class StageWorker:
    """The worker process of this process (one per thread), started on first use."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._conn: Any = None
        self._page: Any = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.is_alive() else None

    def _start(self) -> None:
        parent_conn, child_conn = self._context.Pipe()
        self._page = self._context.Value("i", 0, lock=False)
        self._process = self._context.Process(target=_serve, args=(child_conn, self._page), daemon=True,
                                              name="rosetta-stage-worker")
        with _main_script_hidden():
            self._process.start()
        child_conn.close()
        self._conn = parent_conn

    def _ensure_started(self) -> None:
        if self._process is None or not self._process.is_alive():
            self.stop()
            self._start()

    def stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(timeout=10)
            self._conn.close()
        self._process = self._conn = None

    def warm(self, stages: list[Stage], settings: Settings) -> None:
        """Start the worker now and let it load the stages' models while this process goes on
        (the first stage's answer then waits for that, within ``limits.worker_start_s``)."""
        self._ensure_started()
        self._conn.send(("warm", stages, settings))

    def run(self, stage: Stage, ref: DocRef, settings: Settings, alive: Callable[[], None] = lambda: None) -> Outcome:
        """Run one document-stage in the worker; ``alive`` is called every HEARTBEAT_S while it runs."""
        limits = settings.limits
        self._ensure_started()
        self._conn.send((stage, ref, settings))
        started = time.monotonic()
        allowed, pages, begun = limits.worker_start_s, None, False
        peak, beaten = 0.0, time.monotonic()
        while True:
            if time.monotonic() - beaten > HEARTBEAT_S:
                alive()
                beaten = time.monotonic()
            if self._conn.poll(POLL_S):
                try:
                    message = self._conn.recv()
                except (EOFError, OSError):
                    return self._died(stage)
                if message[0] == "started":
                    pages, started, begun = message[1], time.monotonic(), True
                    allowed = limits.base_s + limits.per_page_s * (pages or 0)
                    continue
                peak = max(peak, rss_mib(self._process.pid))
                self._recycle_if_bloated(limits)
                if message[0] == "ok":
                    return Outcome(result=message[1], peak_rss_mib=peak)
                if message[0] == "document_error":
                    return Outcome(reason=message[1], detail=message[2], peak_rss_mib=peak)
                return Outcome(reason="stage_error", detail=message[1], traceback=message[2], peak_rss_mib=peak)
            if not self._process.is_alive():
                return self._died(stage)
            peak = max(peak, rss_mib(self._process.pid))
            if peak > limits.rss_mib:
                self.stop()
                return Outcome(reason="too_large", detail=f"{stage.name} used more than {limits.rss_mib} MiB "
                                                          f"of memory ({peak:.0f} MiB){_pages(pages)}", peak_rss_mib=peak)
            if time.monotonic() - started > allowed:
                at_page = self._page.value
                self.stop()
                what = "its deadline" if begun else "the worker's start limit"
                return Outcome(reason="stage_timeout",
                               detail=f"{stage.name} ran past {what} of {allowed:.0f} s{_pages(pages)}"
                                      + (f", stopped at page {at_page}" if at_page else ""), peak_rss_mib=peak)

    def _died(self, stage: Stage) -> Outcome:
        self._process.join(timeout=10)  # the pipe can close before the process is reaped
        code = self._process.exitcode
        self.stop()
        how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit status {code}"
        return Outcome(reason="stage_error", detail=f"{stage.name}: the stage worker died ({how})")

    def _recycle_if_bloated(self, limits: LimitsConfig) -> None:
        """Python seldom gives memory back: a worker past half the cap starts afresh, so one
        big document does not count against the next."""
        if self._process is not None and rss_mib(self._process.pid) > limits.rss_mib / 2:
            self.stop()


def _pages(pages: int | None) -> str:
    return f" ({pages} page{'s' if pages != 1 else ''})" if pages is not None else ""


_local = threading.local()


def worker() -> StageWorker:
    """This thread's stage worker (Airflow's dag.test() runs tasks one after another)."""
    if getattr(_local, "worker", None) is None or _local.pid != os.getpid():
        _local.worker, _local.pid = StageWorker(), os.getpid()
    return _local.worker
