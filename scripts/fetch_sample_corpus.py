#!/usr/bin/env python3
"""Fetch Rosetta's sample corpus from Debian documentation packages, checked by sha256.

For each document in samples/manifest.json this downloads the pinned .deb with
``apt-get download NAME=VERSION`` into samples/downloads/ (a git-ignored cache),
unpacks it with ``dpkg-deb -x``, and writes a page subset of the guide's born-digital
PDF to DEST/<lang>/<name>.pdf. It then renders the image-only scan pages listed under
"scans" into DEST/scans/ from real paragraphs of the same packages, writing their
ground truth to samples/truth/.

Every input is checked against the manifest: the .deb, the PDF or text file inside
it, and the text selected for each scan. Rendered files are not: their bytes depend
on the PDFium / Pillow versions. A stamp file in DEST remembers what the last run
wrote and from which inputs (manifest and scripts), so a second run with nothing
changed only re-hashes the outputs.

    .venv/bin/python scripts/fetch_sample_corpus.py [--dest samples/corpus]
    .venv/bin/python scripts/fetch_sample_corpus.py --write-manifest  # record observed sha256s
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pypdfium2 as pdfium

from pipeline.workspace import sha256_file

import render_scans

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "samples" / "manifest.json"
DOWNLOADS = ROOT / "samples" / "downloads"
STAMP = ".fetched.json"  # inside DEST

Entry = dict[str, Any]


class FetchError(Exception):
    """A failure with a message meant for the user; no traceback needed."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check(entry: Entry, key: str, observed: str, what: str, *, record: bool) -> None:
    """Compare a digest with the manifest, or store it there when recording."""
    if record:
        entry[key] = observed
    elif entry.get(key) != observed:
        raise FetchError(
            f"sha256 mismatch for {what}: {MANIFEST.relative_to(ROOT)} has {key}={entry.get(key)}, "
            f"the file has {observed}. If the change is expected, rerun with --write-manifest."
        )


def deb_pattern(doc: Entry) -> str:
    # apt-get names files NAME_VERSION_ARCH.deb with ':' (epoch) escaped as %3a.
    return f"{doc['package']}_{quote(doc['version'], safe='+~.')}_*.deb"


def fetch_debs(docs: list[Entry], *, record: bool) -> dict[str, Path]:
    """Each document's .deb from the cache, else fetched with one apt-get download call
    (apt's start-up dominates, so one call for all is several times faster)."""
    debs: dict[str, Path] = {}
    missing: list[Entry] = []
    for doc in docs:
        cached = sorted(DOWNLOADS.glob(deb_pattern(doc)))
        if cached and not record and sha256_file(cached[0]) == doc.get("deb_sha256"):
            debs[doc["package"]] = cached[0]
            continue
        for stale in cached:  # partial, outdated, or being re-recorded
            stale.unlink()
        missing.append(doc)
    if not missing:
        return debs
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    specs = [f"{doc['package']}={doc['version']}" for doc in missing]
    proc = subprocess.run(["apt-get", "download", *specs], cwd=DOWNLOADS, capture_output=True, text=True)
    if proc.returncode != 0:
        raise FetchError(
            f"`apt-get download {' '.join(specs)}` failed:\n{proc.stderr.strip()}\n"
            "If apt cannot locate a package or version above, run `apt-get update` "
            "(Debian bookworm main must be in the apt sources) and try again."
        )
    for doc in missing:
        fetched = sorted(DOWNLOADS.glob(deb_pattern(doc)))
        if not fetched:
            raise FetchError(f"apt-get download left no {deb_pattern(doc)} in {DOWNLOADS}")
        check(doc, "deb_sha256", sha256_file(fetched[0]), fetched[0].name, record=record)
        debs[doc["package"]] = fetched[0]
    return debs


def unpack(deb: Path, into: Path) -> Path:
    into.mkdir(parents=True)
    proc = subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise FetchError(f"dpkg-deb -x {deb.name} failed: {proc.stderr.strip()}")
    return into


def pdf_bytes(doc: pdfium.PdfDocument) -> bytes:
    """Serialise, pinning what PDFium varies per run so equal input gives equal bytes:
    the /CreationDate (blanked) and the random /ID (replaced by a content hash).
    Replacements keep their length, so the xref offsets stay valid."""
    buf = io.BytesIO()
    doc.save(buf)
    data = re.sub(rb"/CreationDate\([^)]*\)", lambda m: b" " * len(m.group()), buf.getvalue())
    id_re = rb"/ID\[<[0-9A-F]{32}><[0-9A-F]{32}>\]"
    digest = sha256_bytes(re.sub(id_re, b"", data))[:32].upper().encode()
    return re.sub(id_re, b"/ID[<" + digest + b"><" + digest + b">]", data)


def write_page_subset(pdf: Path, first: int, last: int, out: Path) -> int:
    """Copy pages first..last (1-based, inclusive) into a new PDF; returns the page count."""
    src = pdfium.PdfDocument(pdf)
    if not 1 <= first <= last <= len(src):
        raise FetchError(f"page range {first}-{last} is outside {pdf.name} ({len(src)} pages)")
    dst = pdfium.PdfDocument.new()
    dst.import_pages(src, list(range(first - 1, last)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pdf_bytes(dst))
    return last - first + 1


def unpack_documents(manifest: Entry, tmp: Path, *, record: bool) -> dict[str, Path]:
    """Download, verify and unpack every document's package; package -> unpacked root."""
    debs = fetch_debs(manifest["documents"], record=record)
    return {package: unpack(deb, tmp / package) for package, deb in debs.items()}


def package_file(roots: dict[str, Path], entry: Entry, path_key: str, sha_key: str, *, record: bool) -> Path:
    """A file inside an unpacked package, checked against the manifest."""
    path = roots[entry["package"]] / entry[path_key]
    if not path.is_file():
        raise FetchError(f"{entry['package']} does not ship {entry[path_key]}")
    check(entry, sha_key, sha256_file(path), f"{entry['package']}:{entry[path_key]}", record=record)
    return path


def scan_text(roots: dict[str, Path], scan: Entry, *, record: bool) -> list[str]:
    """The scan's paragraphs, picked from the package's plain-text guide and checked."""
    source = package_file(roots, scan, "text", "text_sha256", record=record)
    try:
        paragraphs = render_scans.select_paragraphs(render_scans.read_paragraphs(source), scan["paragraphs"])
    except ValueError as exc:
        raise FetchError(f"scan {scan['name']}: {exc}") from exc
    truth = "\n".join(paragraphs) + "\n"
    check(scan, "truth_sha256", sha256_bytes(truth.encode()), f"the text of scan {scan['name']}", record=record)
    return paragraphs


def build(manifest: Entry, dest: Path, *, record: bool) -> dict[str, str]:
    """Write every output; returns {path relative to dest: sha256}."""
    written: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="rosetta-corpus-") as tmp:
        roots = unpack_documents(manifest, Path(tmp), record=record)
        for doc in manifest["documents"]:
            pdf = package_file(roots, doc, "pdf", "pdf_sha256", record=record)
            out = dest / doc["output"]
            first, last = doc["pages"]
            count = write_page_subset(pdf, first, last, out)
            print(f"  {doc['lang']:6} {doc['package']} {doc['version']}: pages {first}-{last} ({count}) -> {out}")
            written[doc["output"]] = sha256_file(out)
        for scan in manifest["scans"]:
            paragraphs = scan_text(roots, scan, record=record)
            truth = ROOT / scan["truth"]
            truth.parent.mkdir(parents=True, exist_ok=True)
            truth.write_text("\n".join(paragraphs) + "\n", encoding="utf-8")
            out = dest / scan["output"]
            render_scans.render_scan(
                paragraphs, out, lang=scan["lang"], vertical=scan["vertical"], seed=scan["seed"]
            )
            print(f"  {scan['lang']:6} scan {scan['name']} ({sum(map(len, paragraphs))} chars) -> {out}")
            written[scan["output"]] = sha256_file(out)
    return written


def inputs_sha256() -> str:
    """Digest of what decides the outputs: the manifest and the code that renders them."""
    files = (MANIFEST, Path(__file__), Path(render_scans.__file__))
    return sha256_bytes(b"".join(sha256_file(path).encode() for path in files))


def up_to_date(dest: Path) -> bool:
    """True if the last run had the same inputs and its outputs are unchanged."""
    try:
        stamp = json.loads((dest / STAMP).read_text())
    except (OSError, ValueError):
        return False
    return stamp.get("inputs_sha256") == inputs_sha256() and all(
        (dest / rel).is_file() and sha256_file(dest / rel) == digest for rel, digest in stamp["files"].items()
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dest", type=Path, default=ROOT / "samples" / "corpus", help="output folder")
    ap.add_argument(
        "--write-manifest",
        action="store_true",
        help="download afresh and record the observed sha256s in samples/manifest.json",
    )
    args = ap.parse_args(argv)
    dest = args.dest.resolve()
    started = time.monotonic()
    try:
        for tool in ("apt-get", "dpkg-deb"):
            if not shutil.which(tool):
                raise FetchError(f"{tool} not found: the corpus is fetched from Debian packages")
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
        if not args.write_manifest and up_to_date(dest):
            print(f"sample corpus in {dest} is up to date (outputs match their sha256); nothing to do")
            return 0
        print(f"building sample corpus in {dest}")
        written = build(manifest, dest, record=args.write_manifest)
    except FetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.write_manifest:
        MANIFEST.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"recorded sha256s in {MANIFEST}")
    stamp = {"inputs_sha256": inputs_sha256(), "files": written}
    (dest / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    pages = sum(doc["pages"][1] - doc["pages"][0] + 1 for doc in manifest["documents"]) + len(manifest["scans"])
    print(f"done: {len(written)} files, {pages} pages, {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
