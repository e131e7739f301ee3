#!/usr/bin/env python3
"""Build the mixed-language document set from real Debian text, sha256-checked.

Source: Debian's package-description translations of bookworm main (Translation-XX of 20
languages, pinned in benchmarks/mixed_language_manifest.json, fetched by
``build_langid_set.fetch_translations``). One description translated into many languages is
what a safety leaflet, a declaration of conformity or a product manual prints for its
markets: the same text once per language, one section after another. Documents, each a list
of blocks (a description's synopsis as a heading block, then its paragraphs), every block
labelled with its language:

- ``multilingual``: one package's description in every language that translates it (three at
  least, English and one unconfigured language among them), in a fixed market order; what
  Rosetta should load is the configured languages' sections, and nothing of the others;
- ``foreign``: five descriptions in one unconfigured language (Portuguese, Italian, French,
  Dutch, Danish, Swedish, Finnish, Polish, Czech, Slovak, Hungarian, Russian, Ukrainian,
  Catalan, Galician, Basque, Romanian): a document Rosetta must quarantine whole, however close
  its language is to Spanish or German;
- ``configured``: five descriptions in one configured language: loaded whole, as before.

A paragraph a translation left in English (the same text as the English description's) is
labelled ``en``. Documents are split by a hash of their first package's name: ``tune`` (the
only part rules may be chosen on) and ``measure``. The set is written to the git-ignored
cache as JSON lines; its sha256 must match the manifest's.

    .venv/bin/python scripts/build_mixed_language_set.py                   # build or check
    .venv/bin/python scripts/build_mixed_language_set.py --write-manifest  # record a new set hash
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import unicodedata
from pathlib import Path

from build_langid_set import (CACHE, LOCALES, build_command, fetch_translations, load_pinned,
                              translation_records, write_pinned)

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "benchmarks" / "mixed_language_manifest.json"
SET_PATH = CACHE / "mixed_language_set.jsonl"
# locale -> configured language: the langid set's table (English, its msgids there, is a locale here)
CONFIGURED = {"en": "en", **{locale: lang for locale, (lang, _) in LOCALES.items()}}
# a leaflet's order: English first, then the European markets, then Asia
MARKET_ORDER = ["en", "de", "fr", "it", "es", "pt", "ca", "gl", "eu", "nl", "da", "sv", "fi", "pl", "cs", "sk",
                "hu", "ro", "ru", "uk", "ja", "zh_CN", "zh_TW"]
DESCRIPTIONS_PER_DOCUMENT = 5
MAX_MONOLINGUAL_PER_LANGUAGE = 60  # documents per language and kind
MAX_MULTILINGUAL = 600
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def packages(path: Path) -> dict[str, str]:
    """Description-md5 -> package name (the English file names every package)."""
    names = {}
    for record in path.read_text(encoding="utf-8").split("\n\n"):
        name = re.search(r"^Package: (\S+)$", record, re.MULTILINE)
        md5 = re.search(r"^Description-md5: (\w+)$", record, re.MULTILINE)
        if name and md5:
            names.setdefault(md5.group(1), name.group(1))
    return names


def labelled_blocks(locale: str, description: tuple[str, list[str]],
                    english: tuple[str, list[str]]) -> list[dict]:
    """A description as blocks, each with its language: a translation's text equal to the English
    description's is English; a Chinese or Japanese one without any Han or kana is left out
    (untranslated in another way: it cannot be labelled)."""
    lang = CONFIGURED.get(locale, locale)
    synopsis, bodies = description
    english_texts = {unicodedata.normalize("NFC", t) for t in (english[0], *english[1])}
    blocks = []
    for kind, text in [("heading", synopsis)] + [("paragraph", b) for b in bodies]:
        text = unicodedata.normalize("NFC", text)
        label = "en" if text in english_texts else lang
        if label in ("ja", "zh") and not CJK.search(text):
            continue
        blocks.append({"kind": kind, "lang": label, "text": text})
    return blocks


def split_of(name: str) -> str:
    return "tune" if int(hashlib.sha1(name.encode()).hexdigest(), 16) % 2 == 0 else "measure"


def by_hash(keys, salt: str = "") -> list[str]:
    return sorted(keys, key=lambda k: hashlib.sha1((salt + k).encode()).hexdigest())


def build_documents(translations: dict[str, Path]) -> list[dict]:
    names = packages(translations["en"])
    texts = {locale: translation_records(path) for locale, path in translations.items()}
    english = texts["en"]
    documents = []
    # multilingual: every language that translates the description, English first
    candidates = []
    for md5 in by_hash(english, "multilingual"):
        locales = [loc for loc in MARKET_ORDER if md5 in texts.get(loc, {})]
        if len(locales) >= 3 and any(loc not in CONFIGURED for loc in locales):
            candidates.append((md5, locales))
    for md5, locales in candidates[:MAX_MULTILINGUAL]:
        blocks = [b for loc in locales for b in labelled_blocks(loc, texts[loc][md5], english[md5])]
        documents.append({"kind": "multilingual", "name": names.get(md5, md5), "split": split_of(names.get(md5, md5)),
                          "languages": [CONFIGURED.get(loc, loc) for loc in locales], "blocks": blocks})
    # monolingual: five descriptions of one language, each with a body of its own
    for locale in MARKET_ORDER:
        kind = "configured" if locale in CONFIGURED else "foreign"
        pool = [md5 for md5 in by_hash(texts.get(locale, {}), locale) if md5 in english and texts[locale][md5][1]]
        for start in range(0, len(pool), DESCRIPTIONS_PER_DOCUMENT):
            group = pool[start:start + DESCRIPTIONS_PER_DOCUMENT]
            if len(group) < DESCRIPTIONS_PER_DOCUMENT and start:
                break
            if start // DESCRIPTIONS_PER_DOCUMENT >= MAX_MONOLINGUAL_PER_LANGUAGE:
                break
            blocks = [b for md5 in group for b in labelled_blocks(locale, texts[locale][md5], english[md5])]
            name = names.get(group[0], group[0])
            documents.append({"kind": kind, "name": name, "split": split_of(name),
                              "languages": [CONFIGURED.get(locale, locale)], "blocks": blocks})
    return documents


def build(write_manifest: bool = False) -> Path:
    manifest = json.loads(MANIFEST.read_text())
    documents = build_documents(fetch_translations(manifest["translations"]))
    return write_pinned(documents, MANIFEST, SET_PATH, write_manifest, "set_documents")


def load() -> list[dict]:
    """The document set (built and checked first if the cache lacks it)."""
    return load_pinned(MANIFEST, SET_PATH, build)


def main() -> int:
    return build_command(__doc__.split("\n")[0], build, lambda doc: (
        doc["kind"], doc["split"], doc["languages"][0] if doc["kind"] != "multilingual" else "*"), "documents")


if __name__ == "__main__":
    sys.exit(main())
