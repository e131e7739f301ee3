#!/usr/bin/env python3
"""Run the per-document chain over a folder of PDFs and report what became of each file.

Every PDF goes through ``pipeline.batch.runner.process_document`` (extract -> language ->
structure -> chunk -> embed -> enrich) in a one-document batch of a scratch data root, as
the DAG runs it. The documents run one after another in a worker process that this script
kills when a document passes ``--timeout`` seconds (a hang is recorded as ``timeout``, the
run goes on with a fresh worker); a worker that dies is a ``crash``; an exception other than
DocumentError is a ``traceback``. Per file: the outcome (chunks / quarantine reason /
timeout / crash / traceback), seconds, pages, pages OCRed and why, chunk languages. At the
end: totals (files, pages, outcomes, pages/s of the wall time) and the notable files, as a
markdown summary for docs/benchmarks.md. Results are written as JSON lines (--out).

    .venv/bin/python scripts/fetch_robustness_corpus.py
    .venv/bin/python benchmarks/bench_corpus.py samples/robustness --out /tmp/corpus.jsonl [--resume]
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# --- the worker: one document per line on stdin, one JSON result per line on stdout ----------
def process(path: Path, settings) -> dict:
    """One document through the per-document stages; what became of it."""
    from pipeline.batch.discovery import source_document, write_manifest
    from pipeline.batch.runner import process_document
    from pipeline.contracts import ChunkedDocument, DocRef, ExtractedDocument
    from pipeline.stages import CHUNK, EXTRACT
    from pipeline.workspace import Workspace

    batch_id = f"bench-{time.monotonic_ns()}"
    doc = source_document(path, settings, doc_id="doc")
    write_manifest(settings, batch_id, "corpus_refresh", [doc], [])
    ws = Workspace(settings, batch_id)
    result = process_document(DocRef(batch_id=batch_id, doc_id=doc.doc_id), settings)
    row: dict = {"outcome": "chunks" if result.status == "ok" else "quarantined",
                 "reason": result.reason, "detail": result.detail, "stage": result.stage}
    extracted = ws.path(EXTRACT, doc.doc_id)
    if extracted.exists():
        pages = ws.read_model(extracted, ExtractedDocument).pages
        row["pages"] = len(pages)
        row["ocr_pages"] = {p.page_no: getattr(p, "ocr_reason", None) or p.method for p in pages
                            if p.method == "ocr" or getattr(p, "ocr_reason", None)}
    chunked = ws.path(CHUNK, doc.doc_id)
    if chunked.exists():
        chunks = ws.read_model(chunked, ChunkedDocument).chunks
        row["chunks"] = len(chunks)
        row["chunk_langs"] = dict(Counter(c.lang for c in chunks))
    return row


def worker() -> int:
    from pipeline.config import load_settings

    settings = load_settings()
    results = sys.stdout
    sys.stdout = sys.stderr  # a library that prints must not break the result lines
    for line in sys.stdin:
        path = Path(line.strip())
        start = time.monotonic()
        try:
            row = process(path, settings)
        except Exception as exc:  # what the benchmark is here to find
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            row = {"outcome": "traceback", "reason": type(exc).__name__,
                   "detail": f"{str(exc).splitlines()[0][:200] if str(exc) else ''} "
                             f"({Path(frame.filename).name}:{frame.lineno})"}
        row["seconds"] = round(time.monotonic() - start, 2)
        print(json.dumps(row, ensure_ascii=False), file=results, flush=True)
    return 0


# --- the parent: feeds the worker, enforces the timeout, reports ---------------------------
class Worker:
    def __init__(self, data_root: Path):
        env = {**os.environ, "ROSETTA__DATA_ROOT": str(data_root), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)

    def run(self, path: Path, timeout: float) -> dict | str:
        """The document's result line, or "timeout", or "crash" when the worker died."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return "timeout"
        line = self.proc.stdout.readline()
        return json.loads(line) if line else "crash"

    def kill(self) -> int | None:
        self.proc.kill()
        return self.proc.wait()


def page_count(path: Path) -> int | None:
    import pypdfium2 as pdfium

    try:
        with pdfium.PdfDocument(path) as pdf:
            return len(pdf)
    except Exception:  # an unreadable file: its row says what the pipeline made of it
        return None


def summary(rows: list[dict], wall: float) -> str:
    outcomes = Counter(r["outcome"] if r["outcome"] != "quarantined" else f"quarantined: {r['reason']}"
                       for r in rows)
    pages = sum(r.get("pages") or 0 for r in rows)
    ocr_reasons = Counter(reason for r in rows for reason in (r.get("ocr_pages") or {}).values())
    chunk_langs: Counter[str] = Counter()
    for r in rows:
        chunk_langs.update(r.get("chunk_langs") or {})
    busy = sum(r.get("seconds") or 0 for r in rows)
    lines = [f"files {len(rows)}, pages {pages}, {busy:.0f} s of document time ({pages / max(busy, 1e-9):.2f} pages/s), "
             f"wall {wall:.0f} s, "
             f"chunks {sum(r.get('chunks') or 0 for r in rows)}", "", "| outcome | files |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1])]
    lines += ["", "pages OCRed, by reason: " + (", ".join(f"{k} {v}" for k, v in ocr_reasons.most_common()) or "none"),
              "chunk languages: " + ", ".join(f"{k} {v}" for k, v in chunk_langs.most_common())]
    notable = [r for r in rows if r["outcome"] != "chunks" or r.get("ocr_pages") or len(r.get("chunk_langs") or {}) > 1]
    lines += ["", "| file | pages | s | outcome | detail |", "|---|---|---|---|---|"]
    for r in sorted(notable, key=lambda r: (r["outcome"], r["file"])):
        detail = r.get("detail") or ""
        if r.get("ocr_pages"):
            detail = f"OCR pages {dict(Counter(r['ocr_pages'].values()))}; " + detail
        if len(r.get("chunk_langs") or {}) > 1:
            detail = f"chunk langs {r['chunk_langs']}; " + detail
        outcome = r["outcome"] + (f" ({r['reason']})" if r.get("reason") else "")
        lines.append(f"| {r['file']} | {r.get('pages', '')} | {r.get('seconds', '')} | {outcome} | "
                     f"{detail.replace('|', '/')[:160]} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT / "samples" / "robustness")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds one document may take")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files")
    parser.add_argument("--out", type=Path, default=None, help="JSON lines, one per file")
    parser.add_argument("--resume", action="store_true", help="skip the files --out already holds; report all")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker()
    files = sorted(p for p in args.folder.rglob("*") if p.suffix.lower() == ".pdf")[: args.limit]  # Paclitaxel.PDF too
    rows: list[dict] = []
    if args.resume and args.out and args.out.exists():
        rows = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
        done = {r["file"] for r in rows}
        files = [f for f in files if str(f.relative_to(args.folder)) not in done]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as scratch:
        current: Worker | None = None
        for n, path in enumerate(files, 1):
            current = current or Worker(Path(scratch))
            answer = current.run(path, args.timeout)
            if isinstance(answer, str):
                code = current.kill()
                row = {"outcome": answer, "seconds": args.timeout if answer == "timeout" else None,
                       "pages": page_count(path), "detail": f"worker exit code {code}" if answer == "crash" else
                       f"killed after {args.timeout:.0f} s"}
                current = None
            else:
                row = answer
            row["file"] = str(path.relative_to(args.folder))
            rows.append(row)
            if args.out:
                with open(args.out, "a") as out:
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
            what = row["outcome"] + (f" {row.get('chunks')}" if row["outcome"] == "chunks" else
                                     f" ({row.get('reason') or ''}: {(row.get('detail') or '')[:100]})")
            ocr = f", OCR {len(row['ocr_pages'])}" if row.get("ocr_pages") else ""
            print(f"[{n}/{len(files)}] {row['file']}: {row.get('pages')} p, {row.get('seconds')} s{ocr}: {what}",
                  file=sys.stderr, flush=True)
        if current:
            current.kill()
    print(summary(rows, time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
