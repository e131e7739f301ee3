#!/usr/bin/env python3
"""Language-identification accuracy of ``pipeline.text.langid.detect_block`` on real Debian text.

The set (scripts/build_langid_set.py, pinned and sha256-checked by
benchmarks/langid_manifest.json): gettext messages and package-description synopses of
5-15 words (``short``) and 2-4 words (``tiny``, no target), and description paragraphs
of >= 20 words, in en, de, es, ja, zh (simplified and traditional), each labelled with
the language of its catalog or Translation file. Tagged subsets: kanji-only Japanese,
code-switched (Latin acronyms and words inside de/es/ja/zh text), traditional Chinese.
Accuracy = the detected language equals the label (any of lid.176's 176 languages may
be detected). Then the en, de and es items again, set in capitals (as a form's labels, a
heading or a licence's disclaimer are). Figures are printed, never asserted.

    .venv/bin/python benchmarks/bench_langid.py [--errors N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import build_langid_set  # noqa: E402

from pipeline.config import load_settings  # noqa: E402
from pipeline.stages.language import detect_block  # noqa: E402

LANGS = ["en", "de", "es", "ja", "zh"]
KINDS = ["paragraph", "short", "tiny"]
TARGETS = {"paragraph": 99.0, "short": 97.0}


def pct(ok: int, n: int) -> str:
    return f"{100 * ok / n:.1f} ({ok}/{n})" if n else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--errors", type=int, default=0, help="print up to N misread items per language and kind")
    args = parser.parse_args()
    settings = load_settings()
    items = build_langid_set.load()
    detect_block("warm up", settings)
    scores: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    errors: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    started = time.process_time()
    for item in items:
        got, _ = detect_block(item["text"], settings)
        ok = got == item["lang"]
        keys = [(item["lang"], item["kind"]), ("all", item["kind"])]
        keys += [(item["lang"], item["kind"], tag) for tag in item["tags"]]
        keys += [("all", item["kind"], tag) for tag in item["tags"]]
        for key in keys:
            scores[key][0] += ok
            scores[key][1] += 1
        if not ok:
            errors[(item["lang"], item["kind"])].append((got, item["text"]))
    cpu = time.process_time() - started
    print(f"{len(items)} items, {cpu:.2f} CPU s ({1e3 * cpu / len(items):.2f} ms/item)\n")
    print("| language | " + " | ".join(f"{k} % (n)" for k in KINDS) + " |")
    print("|---|" + "---|" * len(KINDS))
    for lang in [*LANGS, "all"]:
        cells = [pct(*scores[(lang, kind)]) for kind in KINDS]
        print(f"| {lang} | " + " | ".join(cells) + " |")
    print("\n| subset | " + " | ".join(KINDS) + " |")
    print("|---|" + "---|" * len(KINDS))
    for lang, tag in [("ja", "kanji_only"), ("zh", "traditional"), ("de", "code_switched"), ("es", "code_switched"),
                      ("ja", "code_switched"), ("zh", "code_switched")]:
        print(f"| {lang} {tag} | " + " | ".join(pct(*scores[(lang, kind, tag)]) for kind in KINDS) + " |")
    capitals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        if item["lang"] in ("en", "de", "es"):
            got, _ = detect_block(item["text"].upper(), settings)
            capitals[(item["lang"], item["kind"])][0] += got == item["lang"]
            capitals[(item["lang"], item["kind"])][1] += 1
    print("\n| in capitals | " + " | ".join(KINDS) + " |")
    print("|---|" + "---|" * len(KINDS))
    for lang in ("en", "de", "es"):
        print(f"| {lang} | " + " | ".join(pct(*capitals[(lang, kind)]) for kind in KINDS) + " |")
    for kind, target in TARGETS.items():
        ok, n = scores[("all", kind)]
        worst = min(LANGS, key=lambda l: scores[(l, kind)][0] / max(scores[(l, kind)][1], 1))
        print(f"\n{kind}: {pct(ok, n)} overall, worst {worst} {pct(*scores[(worst, kind)])}; "
              f"target >= {target}: {'met' if 100 * ok / n >= target else 'MISSED'} overall")
    if args.errors:
        for (lang, kind), misses in sorted(errors.items()):
            print(f"\n{lang} {kind}: {len(misses)} misread, as {dict(Counter(g for g, _ in misses).most_common(6))}")
            for got, text in misses[:args.errors]:
                print(f"    {got:4} {text[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
