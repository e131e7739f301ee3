#!/usr/bin/env python3
"""Fetch the real legal texts (licences and their translations) that Debian packages ship,
sha256-checked, and cut each into its own PDF.

The packages are pinned (name, version, sha256 of the .deb) and fetched the way
scripts/fetch_doc_packages.py fetches its own (``apt-get download NAME=VERSION``, then
``dpkg-deb -x``); each document is a page range of a PDF inside one of them (gzipped PDFs are
unpacked), written to samples/downloads/legal/<name>.pdf (git-ignored).

    .venv/bin/python scripts/fetch_legal_texts.py             # every document, and the fixture
                                                              # tests/fixtures/en-gpl2.pdf (its copy)
    from fetch_legal_texts import fetch; paths = fetch()      # {name: pdf path}
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from fetch_doc_packages import DOWNLOADS, FetchError, Package, fetch_one
from fetch_sample_corpus import write_page_subset

LEGAL = DOWNLOADS / "legal"
GPL2_FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "en-gpl2.pdf"
IG = "installation-guide-amd64"
IG_PACKAGE = Package(IG, "20230508+deb12u1", "812c43e1dc906daf671e3efe953dc023205c238e5bd5a3021ce4ca142793573a",
                     "en", ())
PACKAGES = {IG: IG_PACKAGE}


@dataclass(frozen=True)
class LegalDocument:
    name: str
    lang: str
    package: str
    path: str  # the PDF (or .pdf.gz) inside the package
    first_page: int  # 1-based, inclusive
    last_page: int


DOCUMENTS = [
    # Appendix F of the installation guide: the GNU GPL version 2 (the English original, and
    # the unofficial translations the guide ships).
    LegalDocument("en-gpl2-install-guide", "en", IG, "usr/share/doc/installation-guide-amd64/en/install.en.pdf.gz",
                  110, 113),
    LegalDocument("de-gpl2-install-guide", "de", IG, "usr/share/doc/installation-guide-amd64/de/install.de.pdf.gz",
                  124, 129),
    LegalDocument("es-gpl2-install-guide", "es", IG, "usr/share/doc/installation-guide-amd64/es/install.es.pdf.gz",
                  117, 121),
    LegalDocument("zh-gpl2-install-guide", "zh", IG,
                  "usr/share/doc/installation-guide-amd64/zh_CN/install.zh_CN.pdf.gz", 104, 107),
]


def _pdf_in(root: Path, path: str) -> Path:
    """The package's PDF, unpacked next to its .gz when it is gzipped."""
    source = root / path
    if source.suffix != ".gz":
        return source
    target = source.with_suffix("")
    if not target.exists():
        target.write_bytes(gzip.decompress(source.read_bytes()))
    return target


def fetch(names: list[str] | None = None) -> dict[str, Path]:
    LEGAL.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    for doc in DOCUMENTS:
        if names is not None and doc.name not in names:
            continue
        out = LEGAL / f"{doc.name}.pdf"
        if not out.exists():
            pdf = _pdf_in(fetch_one(PACKAGES[doc.package]), doc.path)
            write_page_subset(pdf, doc.first_page, doc.last_page, out)
        found[doc.name] = out
    return found


def main() -> int:
    try:
        paths = fetch()
    except (FetchError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"  {name}  {path.relative_to(DOWNLOADS.parent.parent)}")
    GPL2_FIXTURE.write_bytes(paths["en-gpl2-install-guide"].read_bytes())
    print(f"  fixture {GPL2_FIXTURE.name}  {GPL2_FIXTURE.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
