#!/usr/bin/env python3
"""Write scripts/scale_corpus.json: over 10,000 born-digital pages from Debian bookworm packages.

The scale benchmark (benchmarks/bench_scale.py) reads this corpus; it was chosen by rule, not
by outcome: the Debian Reference in its six configured-language editions (en, de, es, ja,
zh-cn, zh-tw; 250-280 pages each), both Debian Edu manuals in en, de, es, ja, and from two
TeX documentation packages (texlive-latex-recommended-doc, texlive-science-doc: mostly
English package manuals, some German, French and other translations) the PDFs of at most
MAX_FILE_PAGES (300) pages in the order of the sha256 of their path, until PACKAGE_PAGES pages.
Each .deb is pinned by version and sha256, each PDF by path, sha256 and page count, as in
scripts/robustness_corpus.json; scripts/fetch_robustness_corpus.py fetches either list.

    .venv/bin/python scripts/build_scale_corpus.py      # rewrites scripts/scale_corpus.json
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pypdfium2

from fetch_doc_packages import DOWNLOADS

from pipeline.workspace import sha256_file

OUT = Path(__file__).resolve().with_name("scale_corpus.json")
REFERENCE = "2.100"
EDU = "2.12.23~deb12u1"
TEXLIVE_DOC = {"texlive-latex-recommended-doc": "2022.20230122-3", "texlive-science-doc": "2022.20230122-4"}
MAX_FILE_PAGES = 300  # the Debian Reference has 251-276
PACKAGE_PAGES = 4000  # per TeX documentation package
PACKAGES = ([(f"debian-reference-{lang}", REFERENCE, None) for lang in ("en", "de", "es", "ja", "zh-cn", "zh-tw")]
            + [(f"debian-edu-doc-{lang}", EDU, None) for lang in ("en", "de", "es", "ja")]
            + [(name, version, PACKAGE_PAGES) for name, version in TEXLIVE_DOC.items()])


def deb_file(name: str, version: str) -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    pattern = f"{name}_{version.replace(':', '%3a')}_*.deb"
    if not any(DOWNLOADS.glob(pattern)):
        subprocess.run(["apt-get", "download", f"{name}={version}"], cwd=DOWNLOADS, check=True,
                       stdout=subprocess.DEVNULL)
    return next(DOWNLOADS.glob(pattern))


def pdfs_of(deb: Path) -> list[dict]:
    """Every PDF of the package: path, sha256, pages (files PDFium cannot open are left out)."""
    found = []
    stream = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    assert stream.stdout is not None
    with tarfile.open(fileobj=stream.stdout, mode="r|") as archive, tempfile.TemporaryDirectory() as tmp:
        for member in archive:
            if not member.isfile() or not member.name.endswith(".pdf"):
                continue
            data = archive.extractfile(member).read()  # type: ignore[union-attr]
            copy = Path(tmp) / "file.pdf"
            copy.write_bytes(data)
            try:
                pdf = pypdfium2.PdfDocument(copy)
                pages = len(pdf)
                pdf.close()
            except pypdfium2.PdfiumError:
                continue
            found.append({"path": member.name.removeprefix("./"), "sha256": hashlib.sha256(data).hexdigest(),
                          "pages": pages})
    stream.wait()
    return found


def choose(pdfs: list[dict], cap: int | None) -> list[dict]:
    if cap is None:
        return sorted(pdfs, key=lambda p: p["path"])
    chosen, total = [], 0
    for pdf in sorted(pdfs, key=lambda p: hashlib.sha256(p["path"].encode()).hexdigest()):
        if 0 < pdf["pages"] <= MAX_FILE_PAGES and total + pdf["pages"] <= cap:
            chosen.append(pdf)
            total += pdf["pages"]
    return sorted(chosen, key=lambda p: p["path"])


def main() -> int:
    packages = []
    for name, version, cap in PACKAGES:
        deb = deb_file(name, version)
        pdfs = choose(pdfs_of(deb), cap)
        packages.append({"package": name, "version": version, "deb_sha256": sha256_file(deb), "pdfs": pdfs})
        print(f"  {name}={version}: {len(pdfs)} PDF(s), {sum(p['pages'] for p in pdfs)} pages", flush=True)
    OUT.write_text(json.dumps({"release": "bookworm", "packages": packages}, indent=1) + "\n")
    total = sum(p["pages"] for pkg in packages for p in pkg["pdfs"])
    print(f"{sum(len(pkg['pdfs']) for pkg in packages)} PDFs, {total} pages -> {OUT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
