#!/usr/bin/env python3
"""Build the language-identification evaluation set from real Debian text, sha256-checked.

Sources (pinned in benchmarks/langid_manifest.json, the only committed part):

- gettext catalogs (.mo) in de, es, ja, zh_CN, zh_TW from pinned .deb packages
  (``apt-get download NAME=VERSION``, sha256-checked, unpacked with ``dpkg-deb -x``);
  English is the catalogs' msgids;
- Debian package-description translations of bookworm main (Translation-en, -de, -es,
  -ja, -zh_CN, -zh_TW), fetched by ``apt-get update`` into a private lists folder (the
  system's apt lists are not touched) and sha256-checked after decompression.

Items, each labelled with the language of the catalog or Translation file it came from:

- ``short``: one-line gettext messages and description synopses of 5-15 words;
- ``tiny``: the same sources at 2-4 words (reported, no target);
- ``paragraph``: description paragraphs of >= 20 words.

"Words" for Chinese and Japanese: Latin words plus half the CJK characters (about two
characters a word). Tags: ``kanji_only`` (Japanese without kana), ``code_switched``
(Latin acronyms or words inside de/es/zh/ja text, e.g. GPG, URL, APT), ``traditional``
(zh_TW). Up to ``per_kind`` items per language and kind, chosen by a hash of the text
(deterministic), plus every kanji-only Japanese item. The set is written to the git-ignored cache as JSON lines; its sha256
must match the manifest's.

    .venv/bin/python scripts/build_langid_set.py                   # build or check
    .venv/bin/python scripts/build_langid_set.py --write-manifest  # record a new set hash
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from build_anchors import mo_entries
from pipeline.workspace import sha256_file

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "benchmarks" / "langid_manifest.json"
CACHE = ROOT / "samples" / "downloads" / "langid"
SET_PATH = CACHE / "langid_set.jsonl"
APT_LISTS = CACHE / "apt-lists"
# gettext locale folder -> (label, variant)
LOCALES = {"de": ("de", ""), "es": ("es", ""), "ja": ("ja", ""), "zh_CN": ("zh", "cn"), "zh_TW": ("zh", "tw")}

KANA = re.compile(r"[\u3040-\u30ff]")
HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
CJK_ANY = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-zÀ-ÿ]+(?:['’][A-Za-zÀ-ÿ]+)?")
ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+\b")
PRINTF = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t|I)*[a-zA-Z%]"
                    r"|%\([a-z_]+\)[sdr]|\$\{?[A-Za-z_]+\}?|\{[a-z_0-9]*\}|<[^>]{1,40}>")
ACCEL = re.compile(r"\(_[A-Za-z]\)|_(?=\w)|&(?=\w)")


class BuildError(Exception):
    pass


# --- sources ---------------------------------------------------------------------------
def fetch_packages(pins: list[dict]) -> dict[str, Path]:
    """Download, check and unpack each pinned package: {name: unpacked folder}."""
    debs = CACHE / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    roots = {}
    for pin in pins:
        deb = debs / pin["file"]
        if not deb.exists():
            subprocess.run(["apt-get", "download", f"{pin['name']}={pin['version']}"], cwd=debs, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if (got := sha256_file(deb)) != pin["sha256"]:
            raise BuildError(f"{deb.name}: sha256 {got} != pinned {pin['sha256']}")
        target = CACHE / "unpacked" / pin["name"]
        stamp = target / ".sha256"
        if not stamp.exists() or stamp.read_text() != pin["sha256"]:
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            subprocess.run(["dpkg-deb", "-x", str(deb), str(target)], check=True)
            stamp.write_text(pin["sha256"])
        roots[pin["name"]] = target
    return roots


def fetch_translations(pins: list[dict]) -> dict[str, Path]:
    """Translation-XX files of bookworm main, decompressed into the cache: {locale: path}."""
    out = {pin["locale"]: CACHE / f"Translation-{pin['locale']}" for pin in pins}
    if not all(p.exists() and sha256_file(p) == pin["sha256"] for p, pin in zip(out.values(), pins)):
        (APT_LISTS / "partial").mkdir(parents=True, exist_ok=True)
        locales = ",".join(pin["locale"] for pin in pins)
        subprocess.run(["apt-get", "update", "-o", f"Dir::State::Lists={APT_LISTS}",
                        "-o", f"Acquire::Languages={locales}", "-o", "Dir::Cache::pkgcache=",
                        "-o", "Dir::Cache::srcpkgcache=", "-o", "Debug::NoLocking=1"],
                       check=True, stdout=subprocess.DEVNULL)
        for pin in pins:
            quoted = pin["locale"].replace("_", "%5f")
            found = sorted(APT_LISTS.glob(f"*_dists_bookworm_main_i18n_Translation-{quoted}*"))
            if not found:
                raise BuildError(f"Translation-{pin['locale']}: not in the apt lists")
            with open(out[pin["locale"]], "wb") as handle:
                subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", str(found[0])], stdout=handle, check=True)
    for pin in pins:
        if (got := sha256_file(out[pin["locale"]])) != pin["sha256"]:
            raise BuildError(f"Translation-{pin['locale']}: sha256 {got} != pinned {pin['sha256']} "
                             f"(the archive's translations changed: check and re-pin)")
    return out


def read_mo(path: Path) -> dict[str, str]:
    """msgid -> msgstr of a GNU .mo file (first plural form; the header entry dropped)."""
    catalog = {}
    for raw_id, raw_str in mo_entries(path):
        msgid = raw_id.split(b"\0")[0].decode("utf-8", "replace")
        msgstr = raw_str.split(b"\0")[0].decode("utf-8", "replace")
        if "\x04" in msgid:  # msgctxt
            msgid = msgid.split("\x04", 1)[1]
        if msgid and msgstr:
            catalog[msgid] = msgstr
    return catalog


def translation_records(path: Path) -> dict[str, tuple[str, list[str]]]:
    """Description-md5 (the English original's) -> (synopsis, body paragraphs) of each
    description in a Translation-XX file; verbatim blocks and lists (indented lines) left out."""
    out = {}
    for record in path.read_text(encoding="utf-8").split("\n\n"):
        md5 = re.search(r"^Description-md5: (\w+)$", record, re.MULTILINE)
        match = re.search(r"^Description-(?!md5)[\w-]+: (.*)$((?:\n .*)*)", record, re.MULTILINE)
        if not md5 or not match:
            continue
        paragraphs, lines = [], []
        for line in match.group(2).split("\n")[1:]:
            if line.strip() == ".":
                paragraphs.append(lines)
                lines = []
            else:
                lines.append(line[1:])
        paragraphs.append(lines)
        bodies = [join_lines(p) for p in paragraphs if not any(l.startswith(" ") for l in p)]
        out[md5.group(1)] = (match.group(1).strip(), [b for b in bodies if b])
    return out


def join_lines(lines: list[str]) -> str:
    """Wrapped lines joined: no space between two CJK characters, one elsewhere."""
    text = ""
    for line in (l.strip() for l in lines if l.strip()):
        if text and not (CJK_ANY.match(text[-1]) and CJK_ANY.match(line[0])):
            text += " "
        text += line
    return text


# --- items -----------------------------------------------------------------------------
def clean_message(text: str) -> str | None:
    """A gettext message as prose: placeholders and accelerators removed; None if not prose."""
    text = text.replace("\\n", "\n").strip()
    if "\ufffd" in text or "\n" in text or "--" in text or text.startswith("-") or "\t" in text or "/" in text:
        return None
    text = ACCEL.sub("", PRINTF.sub("", text))
    text = " ".join(text.split()).strip(" :")
    return text or None


def words(text: str) -> int:
    return len(LATIN_WORD.findall(text)) + len(CJK_ANY.findall(text)) // 2


def tags(text: str, lang: str, variant: str) -> list[str]:
    out = []
    if lang == "ja" and HAN.search(text) and not KANA.search(text):
        out.append("kanji_only")
    if lang in ("zh", "ja") and LATIN_WORD.search(text) or lang in ("de", "es") and ACRONYM.search(text):
        out.append("code_switched")
    if variant == "tw":
        out.append("traditional")
    return out


def plausible(text: str, lang: str) -> bool:
    """Drop untranslated entries: CJK labels need CJK text, Latin labels no CJK."""
    cjk = len(CJK_ANY.findall(text))
    return cjk >= 2 if lang in ("zh", "ja") else cjk == 0


def kind_of(text: str, source: str) -> str | None:
    n = words(text)
    if source == "paragraph":
        return "paragraph" if n >= 20 else None
    if 5 <= n <= 15:
        return "short"
    return "tiny" if 2 <= n <= 4 else None


def collect(roots: dict[str, Path], translations: dict[str, Path]) -> dict[tuple[str, str], dict[str, dict]]:
    """{(lang, kind): {text: item}} from every source."""
    pools: dict[tuple[str, str], dict[str, dict]] = {}

    def add(text: str, lang: str, variant: str, source: str, origin: str) -> None:
        text = unicodedata.normalize("NFC", text)
        if not plausible(text, lang) or not (kind := kind_of(text, source)):
            return
        pools.setdefault((lang, kind), {}).setdefault(text, {
            "lang": lang, "kind": kind, "text": text, "source": origin, "tags": tags(text, lang, variant)})

    english: dict[str, str] = {}
    for name, root in sorted(roots.items()):
        for locale, (lang, variant) in LOCALES.items():
            for mo in sorted((root / "usr" / "share" / "locale" / locale / "LC_MESSAGES").glob("*.mo")):
                for msgid, msgstr in read_mo(mo).items():
                    if msgstr.strip() == msgid.strip():
                        continue
                    if (text := clean_message(msgstr)) and (source := clean_message(msgid)):
                        add(text, lang, variant, "message", f"{name}:{locale}/{mo.name}")
                        english.setdefault(source, f"{name}:{mo.name}")
    for text, origin in english.items():
        add(text, "en", "", "message", origin)
    for locale, path in translations.items():
        lang, variant = LOCALES.get(locale, (locale, ""))
        for synopsis, bodies in translation_records(path).values():
            add(synopsis, lang, variant, "message", f"Translation-{locale}:synopsis")
            for body in bodies:
                add(body, lang, variant, "paragraph", f"Translation-{locale}:paragraph")
    return pools


def select(pools: dict[tuple[str, str], dict[str, dict]], per_kind: int) -> list[dict]:
    """Up to ``per_kind`` items per (language, kind), chosen by the hash of their text, and
    every kanji-only Japanese item (rare: they are the hard case)."""
    items = []
    for key in sorted(pools):
        ranked = sorted(pools[key].values(), key=lambda it: hashlib.sha1(it["text"].encode()).hexdigest())
        items += ranked[:per_kind] + [it for it in ranked[per_kind:] if "kanji_only" in it["tags"]]
    return items


def write_pinned(rows: list[dict], manifest_path: Path, set_path: Path, write_manifest: bool, count_key: str) -> Path:
    """Write ``rows`` as JSON lines to ``set_path``, their sha256 recorded in the manifest
    (``write_manifest``, with their count under ``count_key``) or checked against it."""
    manifest = json.loads(manifest_path.read_text())
    payload = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows).encode()
    digest = hashlib.sha256(payload).hexdigest()
    if write_manifest:
        manifest["set_sha256"] = digest
        manifest[count_key] = len(rows)
        manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    elif digest != manifest.get("set_sha256"):
        raise BuildError(f"built set sha256 {digest} != manifest {manifest.get('set_sha256')}")
    set_path.parent.mkdir(parents=True, exist_ok=True)
    set_path.write_bytes(payload)
    return set_path


def load_pinned(manifest_path: Path, set_path: Path, build: Callable[[], Path]) -> list[dict]:
    """A pinned set's rows (built and checked first if the cache lacks it)."""
    manifest = json.loads(manifest_path.read_text())
    if not set_path.exists() or sha256_file(set_path) != manifest.get("set_sha256"):
        build()
    return [json.loads(line) for line in set_path.read_text(encoding="utf-8").splitlines()]


def build(write_manifest: bool = False) -> Path:
    manifest = json.loads(MANIFEST.read_text())
    roots = fetch_packages(manifest["packages"])
    translations = fetch_translations(manifest["translations"])
    items = select(collect(roots, translations), manifest["per_kind"])
    return write_pinned(items, MANIFEST, SET_PATH, write_manifest, "set_items")


def load() -> list[dict]:
    """The evaluation set (built and checked first if the cache lacks it)."""
    return load_pinned(MANIFEST, SET_PATH, build)


def build_command(description: str, build: Callable[[bool], Path], key: Callable[[dict], tuple[str, ...]],
                  noun: str) -> int:
    """A set builder's command line: build (or, with --write-manifest, pin) the set, and print
    its rows counted by ``key``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--write-manifest", action="store_true", help="record the built set's sha256")
    args = parser.parse_args()
    try:
        path = build(args.write_manifest)
    except (BuildError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    counts = Counter(key(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines())
    for parts, n in sorted(counts.items()):
        print("  " + " ".join(f"{part:9}" for part in parts) + f" {n}")
    print(f"{path.relative_to(ROOT)}: {sum(counts.values())} {noun}, sha256 {sha256_file(path)}")
    return 0


def main() -> int:
    return build_command(__doc__.split("\n")[0], build, lambda item: (item["lang"], item["kind"]), "items")


if __name__ == "__main__":
    sys.exit(main())
