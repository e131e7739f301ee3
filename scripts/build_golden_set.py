#!/usr/bin/env python3
"""Build the cross-lingual retrieval golden set (benchmarks/golden/gnome-help.json).

Source: the GNOME desktop help (``gnome-help``) of Debian bookworm's pinned
gnome-user-docs package, a set of ~295 Mallard pages written in English and translated
by the GNOME translation teams with itstool, which keeps every translated page's
element tree identical to the English one. So a paragraph is paired with its
translation mechanically, by its position in the tree:

* every ``<p>`` outside ``<info>`` of every page, in C (English), de, es, ja and zh_CN,
  is keyed by its page and element path (tag + index among same-tag siblings, from the
  root); inline markup (``<gui>``, ``<link>``, ``<key>``) is flattened to its text;
* the English corpus (the retrieval pool) is every distinct English paragraph of at
  least 40 characters (exact duplicates of one text across pages collapse to one
  passage, so the relevant passage is unambiguous);
* a query candidate is a pool paragraph of at least 80 characters whose translation
  exists at the same path in all four languages and differs from the English (an
  untranslated paragraph would be a monolingual query); ``--queries`` candidates are
  taken in sha256 order of the English text (deterministic, content-based), and the
  same passages are queried in every language, so languages are comparable.

A query's relevant passage is the English paragraph it translates; hit@k and MRR@10
are computed against the whole pool (pipeline/alignment/evaluation.py ``evaluate_golden``).

    .venv/bin/python scripts/build_golden_set.py            # fetches the .deb (sha256-checked)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "golden" / "gnome-help.json"
PACKAGE, VERSION = "gnome-user-docs", "43.0-2"
DEB_SHA256 = "0d635a840747958ca84da778b40d341f1155603851f922c9a171f5a181d6a39f"
LOCALES = {"de": "de", "es": "es", "zh": "zh_CN", "ja": "ja"}
MAL = "{http://projectmallard.org/1.0/}"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def paragraphs(page: Path) -> dict[str, str]:
    """Element path -> flattened text of every <p> outside <info>."""
    found: dict[str, str] = {}

    def walk(element: ET.Element, path: str) -> None:
        counts: dict[str, int] = {}
        for child in element:
            if not isinstance(child.tag, str) or child.tag == f"{MAL}info":
                continue
            tag = child.tag.removeprefix(MAL)
            counts[tag] = counts.get(tag, 0) + 1
            child_path = f"{path}/{tag}[{counts[tag]}]"
            if tag == "p":
                found[child_path] = " ".join("".join(child.itertext()).split())
            walk(child, child_path)

    walk(ET.parse(page).getroot(), "")
    return found


def fetch_deb(cache: Path, package: str = PACKAGE, version: str = VERSION, sha256: str = DEB_SHA256) -> Path:
    """The pinned .deb from the cache, else ``apt-get download``; refused unless its sha256 matches."""
    cache.mkdir(parents=True, exist_ok=True)
    pattern = f"{package}_{version.split(':')[-1]}_*.deb"
    found = sorted(cache.glob(pattern))
    if not found:
        subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=cache, check=True, capture_output=True)
        found = sorted(cache.glob(pattern))
    digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"sha256 mismatch for {found[0]}: expected {sha256}, got {digest}")
    return found[0]


def build(deb: Path, n_queries: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        help_root = Path(tmp) / "usr/share/help"
        english: dict[tuple[str, str], str] = {}
        for page in sorted((help_root / "C" / "gnome-help").glob("*.page")):
            for path, text in paragraphs(page).items():
                english[(page.stem, path)] = text
        translated = {lang: {} for lang in LOCALES}
        for lang, locale in LOCALES.items():
            for page in sorted((help_root / locale / "gnome-help").glob("*.page")):
                for path, text in paragraphs(page).items():
                    translated[lang][(page.stem, path)] = text
    pool: dict[str, dict] = {}
    key_of_text: dict[str, str] = {}
    for (page, path), text in english.items():
        if len(text) < 40:
            continue
        if text not in key_of_text:
            key_of_text[text] = f"p{len(pool):05d}"
            pool[key_of_text[text]] = {"id": key_of_text[text], "text": text, "page": page, "path": path}
    candidates = []
    for (page, path), text in english.items():
        if len(text) < 80 or pool[key_of_text[text]]["page"] != page or pool[key_of_text[text]]["path"] != path:
            continue
        versions = {lang: translated[lang].get((page, path)) for lang in LOCALES}
        if all(v and v != text for v in versions.values()):
            candidates.append((sha256_text(text), key_of_text[text], versions))
    candidates.sort()
    queries = []
    for _, passage_id, versions in candidates[:n_queries]:
        for lang, text in sorted(versions.items()):
            queries.append({"id": f"{passage_id}:{lang}", "lang": lang, "text": text, "relevant": passage_id})
    return {
        "name": "gnome-help",
        "source": {"package": PACKAGE, "version": VERSION, "deb_sha256": DEB_SHA256,
                   "pages": "usr/share/help/{C,de,es,ja,zh_CN}/gnome-help/*.page"},
        "construction": "scripts/build_golden_set.py (paragraphs paired by Mallard element path)",
        "reference_language": "en",
        "passages": sorted(pool.values(), key=lambda p: p["id"]),
        "queries": queries,
        "candidates": len(candidates),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=250, help="passages queried (per language)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "rosetta" / "anchor-debs")
    args = parser.parse_args()
    golden = build(fetch_deb(args.cache), args.queries)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(golden, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(golden['passages'])} English passages, {len(golden['queries'])} queries "
          f"({args.queries} per language of {golden['candidates']} candidates), sha256 "
          f"{hashlib.sha256(OUT.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
