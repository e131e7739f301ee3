#!/usr/bin/env python3
"""A golden set's queries as a user without accents types them: every German, Spanish and
English query whose text holds an accent or ß, with its marks dropped and ß written ss (case
kept), against the same pool; for `rosetta eval --golden` (docs/benchmarks.md, "Questions
typed without their accents"). With --umlauts-spelled-out, the German queries only, as a German
writer without the keys types them: ä ö ü as ae oe ue ("Gebuehren", "Aenderung"), ß as ss,
other accents dropped.

    .venv/bin/python benchmarks/unaccented_queries.py benchmarks/golden/install-guide.json /tmp/unaccented.json
    .venv/bin/rosetta eval --golden /tmp/unaccented.json --split test
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from pathlib import Path

LANGS = ("de", "en", "es")
SPELLED_OUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})


def unaccented(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text.replace("ß", "ss")) if not unicodedata.combining(c))


def spelled_out(text: str) -> str:
    return unaccented(unicodedata.normalize("NFC", text).translate(SPELLED_OUT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("golden", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--umlauts-spelled-out", action="store_true", help="German queries, ä ö ü as ae oe ue")
    args = parser.parse_args()
    golden = json.loads(args.golden.read_text(encoding="utf-8"))
    typed, langs, name = ((spelled_out, ("de",), "umlauts-spelled-out") if args.umlauts_spelled_out
                          else (unaccented, LANGS, "unaccented"))
    queries = [dict(q, text=typed(q["text"])) for q in golden["queries"]
               if q["lang"] in langs and typed(q["text"]) != q["text"]]
    args.out.write_text(json.dumps(dict(golden, name=f"{golden['name']}-{name}", queries=queries),
                                   ensure_ascii=False), encoding="utf-8")
    print(f"{len(queries)} of {len(golden['queries'])} queries written {name} to {args.out}")


if __name__ == "__main__":
    main()
