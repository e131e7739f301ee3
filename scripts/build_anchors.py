#!/usr/bin/env python3
"""Build a versioned anchor set (anchors/<version>/) reproducibly.

An anchor set holds translation pairs (English <-> de, es, zh, ja) used to fit and to
judge the alignment maps (pipeline/alignment). Two kinds of rows:

* ``glossary``: the curated compliance / data-protection glossary,
  anchors/glossary/compliance.tsv (one concept per line in all five languages).
* ``phrase``: real parallel phrases extracted mechanically from the gettext catalogs
  (.mo) inside pinned Debian bookworm packages listed in anchors/sources.json. Each
  .deb is fetched with ``apt-get download NAME=VERSION`` into a cache and checked
  against its recorded sha256; nothing installed on this machine is read.

Extraction: every singular msgid/msgstr of the listed domains, with keyboard
accelerators removed (``_Open``, ``開く(_O)``) and whitespace collapsed; kept when the
English is 12-160 characters, at least two words, mostly letters, free of format
placeholders, markup and paths, and the translation differs from it (and holds CJK
characters for zh/ja). Deduplicated: one translation per English phrase and language
(the first domain in sources.json order wins), and a translation claimed by two English
phrases is dropped from that language. Only phrases translated in all four languages
are kept, so the rows are parallel across languages; ``--phrases`` of them are taken in
sha256 order (a deterministic, content-based sample).

Held-out split: a concept (one English phrase or glossary key, with its four
translations) is held out when int(sha256("heldout:" + concept_id)[:8], 16) % 5 == 0,
i.e. ~20 %, fixed by content, so it never moves between versions. Fitting never sees
held-out rows (pipeline/alignment/fitting.py chooses alpha on the training split alone).

Output (committed): ``anchors/<version>/rows.jsonl`` (id, concept, kind, lang, en, text,
split) and ``anchors/<version>/manifest.json`` (sources with sha256, counts, the sha256
of every row with its provenance, and the set's sha256 over all row digests).

    .venv/bin/python scripts/build_anchors.py --version v1
    .venv/bin/python scripts/build_anchors.py --version v1 --record   # (re)record .deb sha256s
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from pipeline.workspace import sha256_file

ROOT = Path(__file__).resolve().parent.parent
ANCHORS = ROOT / "anchors"
SOURCES = ANCHORS / "sources.json"
GLOSSARY = ANCHORS / "glossary" / "compliance.tsv"
LANGS = {"de": "de", "es": "es", "zh": "zh_CN", "ja": "ja"}  # pipeline code -> gettext locale
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
ACCEL_PAREN = re.compile(r"\s*[(（]_?[A-Za-z0-9][)）]")  # 開く(_O), 打开(O)
HELD_OUT_MODULUS = 5


class BuildError(Exception):
    pass


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_of(concept: str) -> str:
    return "heldout" if int(sha256_text(f"heldout:{concept}")[:8], 16) % HELD_OUT_MODULUS == 0 else "train"


def row_digest(row: dict) -> str:
    """The sha256 of a row's content (what `anchors diff` compares)."""
    return sha256_text("\t".join([row["id"], row["kind"], row["lang"], row["en"], row["text"], row["split"]]))


# --- gettext .mo ------------------------------------------------------------------------
def mo_entries(path: Path) -> Iterator[tuple[bytes, bytes]]:
    """The raw (msgid, msgstr) byte strings of a GNU .mo file, header entry included; a
    plural entry's forms are NUL-separated, a context is joined to its msgid by EOT."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    _, count, ids_at, strs_at = struct.unpack(order + "4I", data[4:20])
    for i in range(count):
        id_len, id_off = struct.unpack(order + "2I", data[ids_at + 8 * i:ids_at + 8 * i + 8])
        str_len, str_off = struct.unpack(order + "2I", data[strs_at + 8 * i:strs_at + 8 * i + 8])
        yield data[id_off:id_off + id_len], data[str_off:str_off + str_len]


def read_mo(path: Path) -> dict[str, str]:
    """Singular msgid -> msgstr of a compiled catalog (plural and context entries skipped)."""
    catalog = {}
    for raw_id, raw_str in mo_entries(path):
        msgid, msgstr = raw_id.decode("utf-8", "replace"), raw_str.decode("utf-8", "replace")
        if not msgid or "\x00" in msgid or "\x04" in msgid or not msgstr:
            continue
        catalog[msgid] = msgstr
    return catalog


def clean(text: str) -> str:
    text = ACCEL_PAREN.sub("", text)
    text = re.sub(r"_(?=\w)", "", text)  # GTK mnemonics
    text = unicodedata.normalize("NFC", text)
    return " ".join(text.split())


def english_ok(text: str) -> bool:
    if not 12 <= len(text) <= 160 or len(text.split()) < 2:
        return False
    if re.search(r"[%{}<>$\\|@#=]|https?:|/\w|\w/\w|\.\w{2,4}\b|\t", text):
        return False
    return sum(ch.isalpha() for ch in text) >= 0.7 * len(text)


def translation_ok(text: str, english: str, lang: str) -> bool:
    if not text or text == english or re.search(r"[%{}<>$\\]", text):
        return False
    if lang in ("zh", "ja"):
        return bool(CJK.search(text))
    return 0.4 <= len(text) / len(english) <= 2.5


# --- sources ----------------------------------------------------------------------------
def fetch(packages: list[dict], cache: Path, record: bool) -> dict[str, Path]:
    cache.mkdir(parents=True, exist_ok=True)
    debs, missing = {}, []
    for pkg in packages:
        pattern = f"{pkg['package']}_{quote(pkg['version'], safe='+~.').replace('%3A', '%3a')}_*.deb"  # apt escapes ':' as %3a
        found = sorted(cache.glob(pattern))
        if found and (record or sha256_file(found[0]) == pkg.get("deb_sha256")):
            debs[pkg["package"]] = found[0]
        else:
            for stale in found:
                stale.unlink()
            missing.append((pkg, pattern))
    if missing:
        specs = [f"{p['package']}={p['version']}" for p, _ in missing]
        proc = subprocess.run(["apt-get", "download", *specs], cwd=cache, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"`apt-get download {' '.join(specs)}` failed:\n{proc.stderr.strip()}\n"
                             "Run `apt-get update` (Debian bookworm main in the apt sources) and retry; if a "
                             "pinned version left the archive, build a new anchor version with --record.")
        for pkg, pattern in missing:
            found = sorted(cache.glob(pattern))
            if not found:
                raise BuildError(f"apt-get download left no {pattern} in {cache}")
            debs[pkg["package"]] = found[0]
    for pkg in packages:
        digest = sha256_file(debs[pkg["package"]])
        if record:
            pkg["deb_sha256"] = digest
        elif digest != pkg.get("deb_sha256"):
            raise BuildError(f"sha256 mismatch for {debs[pkg['package']].name}: sources.json has "
                             f"{pkg.get('deb_sha256')}, the file has {digest}")
    return debs


def extract_phrases(packages: list[dict], debs: dict[str, Path]) -> dict[str, dict[str, tuple[str, str]]]:
    """English phrase -> {lang: (translation, provenance)} over every listed domain."""
    table: dict[str, dict[str, tuple[str, str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for pkg in packages:
            into = Path(tmp) / pkg["package"]
            subprocess.run(["dpkg-deb", "-x", str(debs[pkg["package"]]), str(into)], check=True)
            for domain in pkg["domains"]:
                for lang, locale in LANGS.items():
                    mo = into / "usr/share/locale" / locale / "LC_MESSAGES" / f"{domain}.mo"
                    if not mo.exists():
                        raise BuildError(f"{pkg['package']} has no {mo.relative_to(into)}")
                    for msgid, msgstr in read_mo(mo).items():
                        english, text = clean(msgid), clean(msgstr)
                        if english_ok(english) and translation_ok(text, english, lang):
                            provenance = f"gettext:{pkg['package']}={pkg['version']}:{domain}:{locale}"
                            table.setdefault(english, {}).setdefault(lang, (text, provenance))
    # A translation claimed by two English phrases is ambiguous as an anchor: drop it.
    for lang in LANGS:
        claims: dict[str, int] = {}
        for translations in table.values():
            if lang in translations:
                claims[translations[lang][0].casefold()] = claims.get(translations[lang][0].casefold(), 0) + 1
        for translations in table.values():
            if lang in translations and claims[translations[lang][0].casefold()] > 1:
                del translations[lang]
    return table


def glossary_rows() -> list[dict]:
    rows, header = [], None
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            continue
        entry = dict(zip(header, cells, strict=True))
        concept = f"glossary:{entry['key']}"
        for lang in LANGS:
            rows.append({"id": f"{concept}:{lang}", "concept": concept, "kind": "glossary", "lang": lang,
                         "en": entry["en"], "text": entry[lang], "split": split_of(concept),
                         "provenance": f"curated:anchors/glossary/compliance.tsv:{entry['reference']}"})
    return rows


def phrase_rows(table: dict[str, dict[str, tuple[str, str]]], limit: int) -> list[dict]:
    complete = sorted((e for e, t in table.items() if len(t) == len(LANGS)), key=sha256_text)
    if len(complete) < limit:
        raise BuildError(f"only {len(complete)} phrases are translated in all of {sorted(LANGS)}; asked for {limit}")
    rows = []
    for english in complete[:limit]:
        concept = f"phrase:{sha256_text(english)[:16]}"
        for lang, (text, provenance) in sorted(table[english].items()):
            rows.append({"id": f"{concept}:{lang}", "concept": concept, "kind": "phrase", "lang": lang,
                         "en": english, "text": text, "split": split_of(concept), "provenance": provenance})
    return rows


def build(version: str, phrases: int, cache: Path, record: bool) -> Path:
    sources = json.loads(SOURCES.read_text(encoding="utf-8"))
    debs = fetch(sources["packages"], cache, record)
    if record:
        SOURCES.write_text(json.dumps(sources, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    rows = glossary_rows() + phrase_rows(extract_phrases(sources["packages"], debs), phrases)
    rows.sort(key=lambda r: r["id"])
    for row in rows:
        row["sha256"] = row_digest(row)
    out = ANCHORS / version
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "rows.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({k: row[k] for k in ("id", "concept", "kind", "lang", "en", "text", "split")},
                                    ensure_ascii=False) + "\n")
    counts = {lang: {kind: {split: sum(r["lang"] == lang and r["kind"] == kind and r["split"] == split for r in rows)
                            for split in ("train", "heldout")} for kind in ("glossary", "phrase")} for lang in LANGS}
    manifest = {
        "version": version,
        "built_by": "scripts/build_anchors.py",
        "reference_language": "en",
        "languages": sorted(LANGS),
        "distribution": sources["distribution"],
        "sources": {"glossary": {"path": GLOSSARY.relative_to(ROOT).as_posix(), "sha256": sha256_file(GLOSSARY)},
                    "packages": sources["packages"]},
        "held_out_rule": f"int(sha256('heldout:' + concept)[:8], 16) % {HELD_OUT_MODULUS} == 0",
        "counts": counts,
        "rows_sha256": sha256_file(out / "rows.jsonl"),
        "set_sha256": sha256_text("\n".join(r["sha256"] for r in rows)),
        "rows": {r["id"]: {"sha256": r["sha256"], "provenance": r["provenance"]} for r in rows},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", required=True, help="anchor set version, e.g. v1 (the folder name)")
    parser.add_argument("--phrases", type=int, default=1500, help="parallel phrases per language")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "rosetta" / "anchor-debs")
    parser.add_argument("--record", action="store_true", help="record the fetched .debs' sha256 in sources.json")
    args = parser.parse_args()
    try:
        out = build(args.version, args.phrases, args.cache, args.record)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    print(f"{out.relative_to(ROOT)}: {len(manifest['rows'])} rows, set sha256 {manifest['set_sha256']}")
    for lang, kinds in manifest["counts"].items():
        print(f"  {lang}: " + ", ".join(f"{kind} {c['train']} train + {c['heldout']} held-out" for kind, c in kinds.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
