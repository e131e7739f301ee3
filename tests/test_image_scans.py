"""Scans that arrive as image files (PNG, JPEG, multi-page TIFF): their resolution, the OCR
route they share with scanned PDF pages, bad images in quarantine, and the whole way through
`rosetta ingest` and `rosetta reprocess` into the real embedded Weaviate.

Fixtures: tests/fixtures/images (scripts/make_image_scan_fixtures.py), real text typeset
at 300 dpi.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageSequence

import scan_pages
from pipeline.batch import discovery, review_view
from pipeline.batch.runner import run_stage
from pipeline.cli.main import main as cli_main
from pipeline.contracts import DocRef, DocumentError
from pipeline.extraction import images
from pipeline.extraction.pdf import check_file
from pipeline.stages import EXTRACT, extract, stage
from pipeline.stores import vector_store
from pipeline.stores.document_registry import DocumentRegistry
from pipeline.workspace import doc_id_for, sha256_file

IMAGES = Path(__file__).parent / "fixtures" / "images"
SCANS = {"en-scan.png": "en", "ja-scan-nodpi.jpg": "ja", "de-scan-2pages.tif": "de"}


def truth_pages(image: Path) -> list[str]:
    return image.with_suffix(".txt").read_text(encoding="utf-8").split("\f")


def resolution(path: Path) -> list[tuple[float | None, str]]:
    with Image.open(path) as image:
        return [images.page_resolution(images.to_gray(frame), dict(frame.info))
                for frame in ImageSequence.Iterator(image)]


def saved(image: Image.Image, tmp_path: Path, name: str, **options) -> Path:
    path = tmp_path / name
    image.save(path, **options)
    return path


def test_formats_are_told_by_their_bytes(tmp_path):
    assert [images.image_format((IMAGES / n).read_bytes()[:16]) for n in SCANS] == ["PNG", "JPEG", "TIFF"]
    renamed = tmp_path / "scan.pdf"  # a name says nothing: a PNG called .pdf is still read as a PNG
    shutil.copy(IMAGES / "en-scan.png", renamed)
    assert check_file(renamed) == "PNG"


def test_resolution_from_metadata():
    assert resolution(IMAGES / "en-scan.png") == [(pytest.approx(300, abs=0.5), "metadata")]
    assert resolution(IMAGES / "de-scan-2pages.tif") == [(pytest.approx(300, abs=0.5), "metadata")] * 2


def test_a_resolution_tag_that_makes_no_page_is_not_trusted():
    # software writes 72 dpi into images whose size says otherwise: A4 at 300 dpi would be 49 in tall
    assert images.metadata_dpi({"dpi": (72, 72)}, (2480, 3508)) is None
    assert images.metadata_dpi({"dpi": (300, 300)}, (2480, 3508)) == 300
    assert images.metadata_dpi({"dpi": (1, 1)}, (960, 820)) is None
    assert images.metadata_dpi({}, (960, 820)) is None


def test_resolution_from_the_sheet_shape():
    assert images.sheet_dpi((2480, 3508)) == pytest.approx(300, rel=0.01)  # A4 portrait
    assert images.sheet_dpi((3300, 2550)) == pytest.approx(300, rel=0.01)  # Letter landscape
    assert images.sheet_dpi((960, 820)) is None
    gray = np.full((3508, 2480), 255, np.uint8)
    assert images.page_resolution(gray, {}) == (pytest.approx(300, rel=0.01), "page_size")


@pytest.mark.parametrize("factor", [1.0, 0.5])
def test_resolution_estimated_from_the_glyphs(tmp_path, factor):
    """A 12 pt page without a resolution tag, at 300 dpi and scaled to 150 dpi: the median
    line thickness gives the resolution within 15 % (5 % and 12 % measured), and the page is
    brought to 300 dpi."""
    with Image.open(IMAGES / "ja-scan-nodpi.jpg") as image:
        assert "dpi" not in image.info
        small = image.resize((round(image.width * factor), round(image.height * factor)), Image.Resampling.LANCZOS)
    path = saved(small, tmp_path, "page.png")
    ((dpi, rule),) = resolution(path)
    assert rule == "glyph_size" and dpi == pytest.approx(300 * factor, rel=0.15)
    (page,) = images.image_pages(path, 300, max_pages=10, max_megapixels=150)
    assert page.dpi == pytest.approx(300, rel=0.05)
    assert page.gray.shape[1] == pytest.approx(small.width * 300 / dpi, rel=0.06)


def test_a_blank_image_without_resolution_is_assumed_at_the_ocr_resolution(tmp_path):
    path = saved(Image.new("L", (900, 600), 255), tmp_path, "blank.png")
    (page,) = images.image_pages(path, 300, max_pages=10, max_megapixels=150)
    assert (page.source_dpi, page.dpi_from) == (300, "assumed")


@pytest.mark.parametrize("name, data", [
    ("truncated.png", (IMAGES / "truncated.png").read_bytes()),
    ("garbage.jpg", b"\xff\xd8\xff\xe0" + bytes(range(256)) * 8),
    ("header-only.tif", b"II*\x00\x08\x00\x00\x00"),
])
def test_an_image_that_cannot_be_decoded_is_quarantined_with_its_name(settings, tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(DocumentError) as err:
        extract.extract_file(path, settings)
    assert err.value.reason == "corrupt_image" and name in str(err.value)
    manifest = discovery.write_manifest(settings, f"bad-image-{path.stem}", "corpus_refresh",
                                        [discovery.source_document(path, settings, doc_id=path.stem)], [])
    result = run_stage(stage(EXTRACT), DocRef(batch_id=manifest.batch_id, doc_id=path.stem), settings)
    assert (result.status, result.reason) == ("quarantined", "corrupt_image")


def test_too_many_frames_is_refused_before_reading_them(settings, tmp_path):
    frames = [Image.new("1", (200, 200), 1) for _ in range(3)]
    path = saved(frames[0], tmp_path, "three.tif", save_all=True, append_images=frames[1:])
    settings.extraction.max_pages, limit = 2, settings.extraction.max_pages
    try:
        with pytest.raises(DocumentError) as err:
            extract.extract_file(path, settings)
    finally:
        settings.extraction.max_pages = limit
    assert err.value.reason == "too_many_pages"


@pytest.mark.parametrize("name, direction, max_cer", [
    ("en-scan.png", "horizontal", 1.5),
    ("ja-scan-nodpi.jpg", "vertical", 5.0),  # 77 characters: the sideways colon costs 3 (see test_extraction)
    ("de-scan-2pages.tif", "horizontal", 1.5),
])
def test_image_scans_are_read_by_the_scan_ocr_route(settings, name, direction, max_cer):
    doc = extract.extract_file(IMAGES / name, settings, doc_id=name)
    truths = truth_pages(IMAGES / name)
    assert [p.page_no for p in doc.pages] == list(range(1, len(truths) + 1))
    for page, truth in zip(doc.pages, truths):
        assert page.method == "ocr" and page.ocr_reason == "image_file" and page.direction == direction
        # 960 x 820 px at 300 dpi, in points (the JPEG's resolution is estimated: within 10 %)
        assert (page.width, page.height) == (pytest.approx(230.4, rel=0.1), pytest.approx(196.8, rel=0.1))
        assert all(b.method == "ocr" and 0 <= b.bbox[0] < b.bbox[2] <= page.width for b in page.blocks)
        assert scan_pages.cer(truth, page.text) <= max_cer


def test_cli_extract_reads_a_tiff(settings, capsys):
    assert cli_main(["extract", str(IMAGES / "de-scan-2pages.tif"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lang"] == "de" and [p["page_no"] for p in out["pages"]] == [1, 2]


@pytest.fixture(scope="module")
def ingested(settings, weaviate_server):
    source = settings.source_dir
    shutil.rmtree(source, ignore_errors=True)
    (source / "scans").mkdir(parents=True)
    for name in [*SCANS, "truncated.png"]:
        shutil.copy(IMAGES / name, source / "scans" / name)
    assert cli_main(["ingest", str(source)]) == 0
    return source


def live_chunks(client, settings) -> list[dict]:
    collection = client.collections.get(settings.weaviate.collection)
    return [props for _, props, _ in vector_store.iterate_objects(collection)]


def test_image_scans_reach_weaviate_through_rosetta_ingest(ingested, settings, weaviate_server):
    registry = DocumentRegistry(settings.document_registry_path)
    chunks = live_chunks(weaviate_server, settings)
    for name, lang in SCANS.items():
        path = ingested / "scans" / name
        doc_id = doc_id_for(path, settings.source_dir)
        row = registry.get(doc_id)
        assert row.status == "loaded" and row.lang == lang and row.sha256 == sha256_file(path)
        mine = sorted((c for c in chunks if c["doc_id"] == doc_id), key=lambda c: c["chunk_index"])
        assert mine and len(mine) == row.chunks
        assert {c["lang"] for c in mine} == {lang}
        assert {c["extraction_method"] for c in mine} == {"ocr"}
        assert all(c["source_sha256"] == row.sha256 for c in mine)
        truth = "".join(truth_pages(IMAGES / name))
        assert scan_pages.cer(truth, "".join(c["text"] for c in mine)) <= 5.0
        if name.endswith(".tif"):
            assert min(c["page_start"] for c in mine) == 1 and max(c["page_end"] for c in mine) == 2
    bad = registry.get(doc_id_for(ingested / "scans" / "truncated.png", settings.source_dir))
    assert (bad.status, bad.quarantine_reason) == ("quarantined", "corrupt_image")
    assert "truncated.png" in bad.quarantine_detail


def test_reprocess_takes_an_image_scan(ingested, settings, weaviate_server):
    path = ingested / "scans" / "de-scan-2pages.tif"
    doc_id = doc_id_for(path, settings.source_dir)
    before = sorted(c["chunk_id"] for c in live_chunks(weaviate_server, settings) if c["doc_id"] == doc_id)
    assert cli_main(["reprocess", str(path)]) == 0
    after = [c for c in live_chunks(weaviate_server, settings) if c["doc_id"] == doc_id]
    assert sorted(c["chunk_id"] for c in after) == before  # the same chunks, not duplicated
    assert DocumentRegistry(settings.document_registry_path).get(doc_id).status == "loaded"


def test_an_image_past_the_pixel_cap_is_brought_down_to_fit(tmp_path):
    """900 x 600 at 300 dpi (0.54 megapixels) under a cap of 0.25: 204 dpi, as a PDF page would be."""
    image = Image.new("L", (900, 600), 255)
    path = tmp_path / "page.png"
    image.save(path, dpi=(300, 300))
    (page,) = images.image_pages(path, 300, max_pages=10, max_megapixels=0.25)
    assert page.gray.size <= 0.25e6 and page.dpi == pytest.approx(300 * (0.25 / 0.54) ** 0.5, rel=1e-3)
    assert page.source_dpi == pytest.approx(300, rel=1e-3)


def test_an_image_past_pillows_pixel_limit_is_quarantined_as_too_large(settings, tmp_path, monkeypatch):
    """Pillow refuses to decode past twice Image.MAX_IMAGE_PIXELS (a decompression bomb): too
    large, not corrupt. The limit is lowered here so the test image stays small."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100_000)
    path = tmp_path / "poster.png"
    Image.new("1", (1000, 1000), 1).save(path)
    with pytest.raises(DocumentError) as err:
        extract.extract_file(path, settings)
    assert err.value.reason == "too_large" and "poster.png" in err.value.detail and "pixels" in err.value.detail


def test_a_reviewer_sees_the_crop_of_an_image_scans_page(ingested, settings):
    """The QA view's crop of an image file's chunk is cut from the image (PDFium cannot open
    it), second TIFF frame included, at the view's resolution."""
    doc_id = doc_id_for(ingested / "scans" / "de-scan-2pages.tif", settings.source_dir)
    batch_id = DocumentRegistry(settings.document_registry_path).get(doc_id).last_batch
    sampled = [c for c in review_view.batch_sample(settings, batch_id)["chunks"] if c["doc_id"] == doc_id]
    assert sampled, "the scan has a chunk in its batch's QA sample"
    for chunk in sampled:
        with Image.open(io.BytesIO(review_view.source_crop(settings, batch_id, chunk["chunk_id"]))) as crop:
            gray = np.asarray(crop.convert("L"))
        assert 100 < gray.shape[1] <= 8.27 * review_view.CROP_DPI + 1  # within an A4 page's width at 110 dpi
        assert (gray < 128).mean() > 0.01, "the crop holds the chunk's ink"
    assert review_view.source_crop(settings, batch_id, "no-such-chunk") is None
    path, original = ingested / "scans" / "de-scan-2pages.tif", (ingested / "scans" / "de-scan-2pages.tif").read_bytes()
    try:  # the file changed since the batch read it: a crop of it would show another page
        path.write_bytes(original + b"\0")
        assert review_view.source_crop(settings, batch_id, sampled[0]["chunk_id"]) is None
    finally:
        path.write_bytes(original)
