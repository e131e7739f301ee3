"""The OCR cache (pipeline/ocr/cache.py): a page image whose exact pixels were read before by
the same OCR code is not read again. The real OCR on a real scan fixture, then the real
extract stage over a scanned PDF read twice."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium

from pipeline.ocr import cache as ocr_cache
from pipeline.ocr.cache import PageCache, page_key
from pipeline.ocr.engines import recogniser
from pipeline.ocr.page import ocr_page
from pipeline.stages import extract

from conftest import FIXTURES

VERTICAL = {"ja": "jpn_vert"}


def scan() -> np.ndarray:
    pixels = pdfium.PdfDocument(FIXTURES / "kinds" / "de-horizontal.pdf")[0].render(scale=150 / 72, grayscale=True)
    array = pixels.to_numpy()
    return np.ascontiguousarray(array[..., 0] if array.ndim == 3 else array)


def test_a_page_read_before_is_taken_from_the_cache_as_it_was_read(tmp_path):
    gray, rec, reads = scan(), recogniser(), []

    def read():
        reads.append(1)
        return ocr_page(gray, VERTICAL, rec)

    first = PageCache(tmp_path).read(gray, VERTICAL, rec, read)
    again = PageCache(tmp_path).read(gray, VERTICAL, rec, read)  # another worker process, the same folder
    assert len(reads) == 1 and not first.from_cache and again.from_cache
    assert "GNU General Public" in " ".join(b.text for b in first.blocks)  # a real reading
    assert again.blocks == first.blocks and again.engines == first.engines
    assert (again.direction, again.rotation) == (first.direction, first.rotation)


def test_other_pixels_models_or_ocr_code_are_another_key(monkeypatch):
    gray, rec = scan(), recogniser()
    key = page_key(gray, VERTICAL, rec)
    specked = gray.copy()
    specked[10, 10] = 255 - specked[10, 10]
    assert page_key(specked, VERTICAL, rec) != key
    assert page_key(gray.T.copy(), VERTICAL, rec) != key  # the same bytes in another shape
    assert page_key(gray, {"ja": "jpn_vert", "zh": "chi_sim_vert"}, rec) != key
    monkeypatch.setattr(ocr_cache, "ocr_code_digest", lambda: "a changed pipeline/ocr")
    assert page_key(gray, VERTICAL, rec) != key


def test_the_clause_tables_the_ocr_borrows_are_part_of_its_code(tmp_path, monkeypatch):
    """ocr/spaces.py restores the space after the numbers clauses.py lists: a change there reads
    pages afresh as a change inside pipeline/ocr does."""
    from pipeline.text import clauses

    before = ocr_cache.ocr_code_digest()
    changed = tmp_path / "clauses.py"
    changed.write_text(Path(clauses.__file__).read_text(encoding="utf-8") + "\n# another numeral\n", encoding="utf-8")
    monkeypatch.setattr(clauses, "__file__", str(changed))
    ocr_cache.ocr_code_digest.cache_clear()
    try:
        assert ocr_cache.ocr_code_digest() != before
    finally:
        ocr_cache.ocr_code_digest.cache_clear()


def test_a_cache_that_cannot_be_used_is_skipped_with_a_warning(tmp_path, caplog):
    gray, rec = scan()[:400, :400].copy(), recogniser()
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache's folder would be")
    with caplog.at_level(logging.WARNING):
        result = PageCache(blocked).read(gray, VERTICAL, rec, lambda: ocr_page(gray, VERTICAL, rec))
    assert not result.from_cache and "OCR cache" in caplog.text and "not written" in caplog.text

    cache = PageCache(tmp_path / "cache")
    cache.files.write(page_key(gray, VERTICAL, rec), b'{"blocks": [{"text": "half a')  # a torn file
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        result = cache.read(gray, VERTICAL, rec, lambda: ocr_page(gray, VERTICAL, rec))
    assert not result.from_cache and "not read" in caplog.text
    assert cache.read(gray, VERTICAL, rec, lambda: ocr_page(gray, VERTICAL, rec)).from_cache  # written anew


def test_the_extract_stage_reads_a_scan_once(settings, tmp_path, caplog, monkeypatch):
    """A scanned PDF extracted twice (a reprocessed document): the second run OCRs nothing and
    gives the same pages; with the cache off, nothing is kept."""
    monkeypatch.setattr(settings, "data_root", tmp_path / "data")
    path = FIXTURES / "image-only.pdf"
    with caplog.at_level(logging.INFO, logger="pipeline.stages.extract"):
        first = extract.extract_file(path, settings, doc_id="scan")
    assert "from the OCR cache" not in caplog.text and list(settings.ocr_cache_path.rglob("*.json"))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="pipeline.stages.extract"):
        again = extract.extract_file(path, settings, doc_id="scan")
    assert caplog.text.count("from the OCR cache") == len(first.pages) >= 1
    assert again.pages == first.pages

    monkeypatch.setattr(settings, "data_root", tmp_path / "off")
    monkeypatch.setattr(settings.extraction, "ocr_cache_mb", 0)
    assert extract.extract_file(path, settings, doc_id="scan").pages == first.pages
    assert not settings.ocr_cache_path.exists()
