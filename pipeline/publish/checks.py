"""The QA gate's automatic checks of one staged chunk; each returns (passed, detail)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pipeline.config import Settings
from pipeline.contracts import CleanedDocument, ExtractedDocument, StructuredDocument
from pipeline.stages import EXTRACT, LANGUAGE, STRUCTURE
from pipeline.stores import vector_store
from pipeline.text.garbage import is_ocr_garbage, is_symbol_soup
from pipeline.text.langid import CJK, CJK_WEIGHT, KANA, SCRIPTS, code_share, language_candidates, latin_letters
from pipeline.workspace import Workspace

Check = Callable[[dict[str, Any]], tuple[bool, str]]
# Code has no language of its own: chunking labels a listing or a command line with the
# language of the text around it (pipeline.text.block_languages), and fastText reads macro
# names as anything (Croatian, Kannada, Esperanto in the 10,000-page run). Half of a chunk's
# words of code or more: the label is not judged.
CODE_SHARE = 0.5


def short_text_script_agrees(text: str, label: str, doc_lang: str | None = None) -> tuple[bool, str]:
    """Under 30 letters a detector is a guess, but the script is not: a Latin label on
    Han/kana text is wrong however short; kana means Japanese. A Han or kana character counts
    CJK_WEIGHT Latin letters, as it does for the language stage ("dh_installdocs(1)
    命令会安装这个文件。" is Chinese). Latin text alone under a Chinese or Japanese label is
    wrong unless that is its document's language: too short to read, it took the label of
    the text around it (a DocBook manual's "REVISION HISTORY" in Japanese), as code does."""
    latin, kana, han = latin_letters(text), len(KANA.findall(text)), len(CJK.findall(text))
    script = SCRIPTS.get(label)
    if script is None:  # a language outside the configured ones, kept inside an accepted document
        return True, f"short text, label {label}: its script is not in the table, not judged"
    if script == "latin":
        ok = han + kana <= latin / 4
    elif not han + kana:
        ok = label == doc_lang
    elif label == "zh":
        ok = kana == 0 and CJK_WEIGHT * han >= latin
    else:
        ok = CJK_WEIGHT * (han + kana) >= latin
    return ok, f"short text ({latin} Latin, {han} Han, {kana} kana letters), label {label}, document {doc_lang}"


class Checker:
    """The checks, with what they need from the workspace and the staging collection."""

    def __init__(self, ws: Workspace, settings: Settings, collection, dimension: int):
        self.ws, self.settings, self.collection, self.dimension = ws, settings, collection, dimension
        self._cleaned: dict[str, CleanedDocument] = {}
        self._ocr_pages: dict[str, set[int]] = {}

    def cleaned(self, doc_id: str) -> CleanedDocument:
        if doc_id not in self._cleaned:
            self._cleaned[doc_id] = self.ws.read_model(self.ws.path(LANGUAGE, doc_id), CleanedDocument)
        return self._cleaned[doc_id]

    def text_present(self, obj: dict[str, Any]) -> tuple[bool, str]:
        """Text, and no more than one line in ten (at most one in a short chunk) of OCR
        garbage or symbol soup: dusty scans leave dozens of lone "8", "a", "日" lines. A chunk
        read from a text layer has no OCR to garble it: only symbol soup counts there (a
        manual's $FZF_COMPLETION_PATH lines, a formula's lone "}" and "n" are not dust)."""
        text, lang = obj["properties"]["text"].strip(), obj["properties"]["lang"]
        if not text:
            return False, "empty text"
        lines = [line for line in text.splitlines() if line.strip()]
        ocr = self.read_by_ocr(obj["properties"])
        latin = SCRIPTS.get(lang) == "latin"
        bad = [line for line in lines if (ocr and is_ocr_garbage(line, latin))
               or is_symbol_soup(line, self.settings.cleaning.garbage_max_symbol_ratio)]
        ok = len(bad) <= max(1, len(lines) // 10)
        return ok, f"{len(bad)} of {len(lines)} line(s) garbage" + (f", e.g. {bad[0][:40]!r}" if bad else "")

    def read_by_ocr(self, p: dict[str, Any]) -> bool:
        """Whether any page of the chunk was read (wholly or in part) by OCR; when the workspace
        cannot tell, the chunk is taken as OCRed."""
        method = p.get("extraction_method")
        if method == "text_layer":
            return False
        if "ocr" not in (method or "") or "page_start" not in p or not self.ws.path(EXTRACT, p["doc_id"]).exists():
            return True
        path = self.ws.path(EXTRACT, p["doc_id"])
        if p["doc_id"] not in self._ocr_pages:
            pages = self.ws.read_model(path, ExtractedDocument).pages
            self._ocr_pages[p["doc_id"]] = {page.page_no for page in pages
                                            if page.method == "ocr" or any(b.method == "ocr" for b in page.blocks)}
        return any(n in self._ocr_pages[p["doc_id"]] for n in range(p["page_start"], p["page_end"] + 1))

    def language_agrees(self, obj: dict[str, Any]) -> tuple[bool, str]:
        """The label is among a fresh detection's top three: fastText's lite model splits
        its vote on technical English (fi 0.27, en 0.24 on a real chunk), while a wrong
        label (a Chinese chunk marked German) is nowhere near the top."""
        text, label = obj["properties"]["text"], obj["properties"]["lang"]
        if (share := code_share(text)) >= CODE_SHARE:
            return True, f"code or markup ({share:.0%} of its words), labelled {label} by its context: not judged"
        if obj["properties"].get("structure_type") == "TOC":
            # A contents page lists the document's headings, English file names among them in the
            # Chinese and Japanese guides ("5.25 patches/* . . . 36"): its label is the document's.
            return True, f"contents entries, labelled {label} by their document: not judged"
        letters = sum(ch.isalpha() for ch in text)
        if letters < 30:
            return short_text_script_agrees(text, label, obj["properties"].get("doc_lang"))
        candidates = language_candidates(text, self.settings, k=3)
        # Code and command lines inside a manual read as English; tolerate them there.
        ascii_heavy = sum(ch.isascii() for ch in text) > 0.6 * len(text)
        ok = label in candidates or (candidates[0] == "en" and ascii_heavy)
        return ok, f"label {label}, fresh detection {', '.join(candidates)}"

    def clause_markers_balanced(self, obj: dict[str, Any]) -> tuple[bool, str]:
        """Per chunk, the chunk's clause label agrees with the clause markers: the clause it names
        overlaps it, and a chunk that lies wholly inside a clause names one. A long clause split
        into parts passes; a label pointing elsewhere, or missing inside a clause, fails."""
        p = obj["properties"]
        structure = self.ws.read_model(self.ws.path(STRUCTURE, p["doc_id"]), StructuredDocument)
        spans: dict[str, list[int]] = {}
        for offset, kind, cid in structure.markers:
            spans.setdefault(cid, [offset, offset])[0 if kind == "CLAUSE_START" else 1] = offset
        start, end = p["char_start"], p["char_end"]
        named = p.get("clause_id") or None
        holding = sorted((e - s, cid) for cid, (s, e) in spans.items() if s <= start and end <= e)
        if named is None:
            return not holding, f"no clause named, inside {holding[0][1]}" if holding else "outside every clause"
        if named not in spans:
            return False, f"names {named}, which the structure does not hold"
        s, e = spans[named]
        return s < end and start < e, f"names {named} [{s}:{e}] for the chunk [{start}:{end}]"

    def vector_sound(self, obj: dict[str, Any]) -> tuple[bool, str]:
        vector = np.asarray(obj["vector"], dtype=np.float64)
        norm = float(np.linalg.norm(vector)) if vector.size else 0.0
        ok = vector.shape == (self.dimension,) and bool(np.isfinite(vector).all()) and abs(norm - 1.0) < 1e-3
        return ok, f"dim {vector.size}, norm {norm:.4f}"

    def top_hit_is_self(self, obj: dict[str, Any]) -> tuple[bool, str]:
        hits = self.collection.query.near_vector(near_vector=obj["vector"], limit=3, return_metadata=["distance"])
        if not hits.objects:
            return False, "no hit"
        best = hits.objects[0]
        # Identical texts give identical vectors: a tie at distance ~0 counts as self.
        ok = str(best.uuid) == obj["uuid"] or (best.metadata.distance < 1e-5 and
                                               best.properties["text"] == obj["properties"]["text"])
        return ok, f"top hit {best.uuid} at distance {best.metadata.distance:.5f}"

    def lineage_complete(self, obj: dict[str, Any]) -> tuple[bool, str]:
        missing = [f for f in vector_store.LINEAGE_FIELDS if obj["properties"].get(f) in (None, "", [])]
        return not missing, f"missing {missing}" if missing else "complete"

    def offsets_map_back(self, obj: dict[str, Any]) -> tuple[bool, str]:
        p = obj["properties"]
        source = self.cleaned(p["doc_id"]).text[p["char_start"]:p["char_end"]]
        return source == p["text"], f"[{p['char_start']}:{p['char_end']}]"

    def all(self) -> dict[str, Check]:
        return {"text_present": self.text_present, "language_agrees": self.language_agrees,
                "clause_markers_balanced": self.clause_markers_balanced, "vector_sound": self.vector_sound,
                "top_hit_is_self": self.top_hit_is_self, "lineage_complete": self.lineage_complete,
                "offsets_map_back": self.offsets_map_back}
