#!/usr/bin/env python3
"""Fetch the Debian documentation packages the extraction benchmarks read, sha256-checked.

Each pinned .deb is downloaded with ``apt-get download NAME=VERSION`` into
samples/downloads/ (git-ignored; the sample-corpus script shares this cache), its
sha256 checked, and unpacked with ``dpkg-deb -x`` into samples/downloads/unpacked/NAME/.
A second run only re-checks the hashes.

    .venv/bin/python scripts/fetch_doc_packages.py          # all packages
    from fetch_doc_packages import fetch; roots = fetch()   # {name: unpacked folder}
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pipeline.workspace import sha256_file

ROOT = Path(__file__).resolve().parent.parent
DOWNLOADS = ROOT / "samples" / "downloads"
UNPACKED = DOWNLOADS / "unpacked"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str
    lang: str  # en, de, es, ja, zh-cn, zh-tw
    pdfs: tuple[str, ...]  # born-digital PDFs inside the package
    text: str | None = None  # the plain-text rendering (gzip), source of scan text


MG = "1.2.53"
EDU = "2.12.23~deb12u1"
PACKAGES = [
    Package("maint-guide", MG, "762c8a400a36668d2eb814a3ba356b06488fd889dfce478eb11d5cfb189a47b5", "en",
            ("usr/share/doc/maint-guide/maint-guide.en.pdf",), "usr/share/doc/maint-guide/maint-guide.en.txt.gz"),
    Package("maint-guide-de", MG, "821afc6b85ffe9cbc9b7acbcdd5876ccbb855c3876ee5524d21602fd41d979c1", "de",
            ("usr/share/doc/maint-guide-de/maint-guide.de.pdf",), "usr/share/doc/maint-guide-de/maint-guide.de.txt.gz"),
    Package("maint-guide-es", MG, "5a76b5e43285173ce4cce9284fb47b9a1851a68a9c0c0b8300c338d8890a42b6", "es",
            ("usr/share/doc/maint-guide-es/maint-guide.es.pdf",), "usr/share/doc/maint-guide-es/maint-guide.es.txt.gz"),
    Package("maint-guide-ja", MG, "67e9020818b7664b465239d96316a13af5f8cbd9a8bed5e8773c74e31ca24c97", "ja",
            ("usr/share/doc/maint-guide-ja/maint-guide.ja.pdf",), "usr/share/doc/maint-guide-ja/maint-guide.ja.txt.gz"),
    Package("maint-guide-zh-cn", MG, "d605b60a034f63857bc44205aed5ad7ba6e17d0d2b1ba5e79179b4e7ec4ee4bc", "zh-cn",
            ("usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.pdf",),
            "usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.txt.gz"),
    Package("maint-guide-zh-tw", MG, "5f70f36f239c6378ef01215e7ba530d236ce0987a6d235e2b70ef089ae9823c8", "zh-tw",
            ("usr/share/doc/maint-guide-zh-tw/maint-guide.zh-tw.pdf",),
            "usr/share/doc/maint-guide-zh-tw/maint-guide.zh-tw.txt.gz"),
    Package("debian-edu-doc-de", EDU, "8bf494be7b24baf3b84cf080421357a01938e0f643971d6fb58834612882f2bc", "de",
            ("usr/share/doc/debian-edu-doc-de/debian-edu-bookworm-manual.pdf",)),
    Package("debian-edu-doc-es", EDU, "83f3c1bc05cf8bd2604df2d59e48f0b426744aee2820abae022c640891306742", "es",
            ("usr/share/doc/debian-edu-doc-es/debian-edu-bookworm-manual.pdf",)),
    Package("debian-edu-doc-ja", EDU, "ef8656af2240094faffc85144ce659eda1114df5a9da14580f4bfbe95fa505bf", "ja",
            ("usr/share/doc/debian-edu-doc-ja/debian-edu-bookworm-manual.pdf",)),
]

# Debian Reference 2.100 (bookworm) in the same six languages: the text of the OCR
# degradation suite (scripts/degrade_pages.py), which no earlier OCR choice was tuned on.
REF = "2.100"
REFERENCE_PACKAGES = [
    Package(f"debian-reference-{lang}", REF, sha, lang, (), f"usr/share/debian-reference/debian-reference.{lang}.txt.gz")
    for lang, sha in [
        ("en", "9f31d3a17df505de09689ca255512ea58c1fc47c59bb1b0c7bf1c23362e9743f"),
        ("de", "3b0ce65fd63e75ddf8eb07ca36293425135080e690a07e06a6ac8bc8040ef0aa"),
        ("es", "a59b68c96f83d3cf29a476c847aee38364764603ea62eee592791e0a843a269e"),
        ("ja", "f67140e0b994409413bd5fcc8dfcce832445c99d724401f0275fa238daf30325"),
        ("zh-cn", "6d2d8d9a646397e28b04cdff23d2e4374101ebf9be348e35961af62c8a2d0977"),
        ("zh-tw", "d2785bbfcb9c3eb6343a37520df595a720bb30fa634d4cf0750d1c04a0226057"),
    ]
]


class FetchError(Exception):
    pass


def download(name: str, version: str, sha256: str) -> Path:
    """The pinned .deb in samples/downloads/ (downloaded if missing), its sha256 checked."""
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    pattern = f"{name}_{version.replace(':', '%3a')}_*.deb"  # _all or _amd64
    if not any(DOWNLOADS.glob(pattern)):
        subprocess.run(["apt-get", "download", f"{name}={version}"], cwd=DOWNLOADS, check=True,
                       stdout=subprocess.DEVNULL)
    deb = next(DOWNLOADS.glob(pattern))
    if (got := sha256_file(deb)) != sha256:
        raise FetchError(f"{deb.name}: sha256 {got} != pinned {sha256}")
    return deb


def fetch_one(pkg: Package) -> Path:
    """The unpacked folder of one package (downloaded and checked if needed)."""
    deb = download(pkg.name, pkg.version, pkg.sha256)
    target = UNPACKED / pkg.name
    stamp = target / ".sha256"
    if not stamp.exists() or stamp.read_text() != pkg.sha256:
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(target)], check=True)
        stamp.write_text(pkg.sha256)
    return target


def fetch(names: list[str] | None = None) -> dict[str, Path]:
    return {p.name: fetch_one(p) for p in PACKAGES if names is None or p.name in names}


def main() -> int:
    try:
        roots = fetch()
    except (FetchError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for pkg in PACKAGES:
        print(f"  {pkg.name}={pkg.version}  {roots[pkg.name].relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
