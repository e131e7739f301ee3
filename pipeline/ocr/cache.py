"""Pages already read: a page image whose exact pixels were OCRed before, by the same OCR code
and engines, is not read again.

A scanned page costs 5-6 s of OCR on 2 cores against well under a second for all else the
pipeline does with it, and a scan is read again whenever its document is: ``rosetta
reprocess``, ``rosetta ingest --force`` after an upgrade of anything but the OCR, a contract
that comes back with a signature page added. Each page's reading (``PageOcr``, in the pixel
frame of the image it was given) is a JSON file under ``<data_root>/ocr-cache/``, named by
the sha256 of the image's pixels and shape, the vertical models asked for, the recogniser's
name, Tesseract's, OpenCV's and ONNX Runtime's versions and the source of pipeline/ocr
itself and of the text modules it borrows tables from (clauses, langid): any change to the
OCR code or its engines reads every page afresh (a Tesseract model
file replaced without a new Tesseract is not seen: delete the folder then). Shared by worker
processes and containers without a lock (pipeline/stores/file_cache.py); trimmed at each
batch's finish to ``extraction.ocr_cache_mb`` (0 turns it off); one that cannot be read or
written is skipped with a warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

import numpy as np

from pipeline.ocr.engines import Recogniser, tesseract_version
from pipeline.ocr.page import OcrBlock, PageOcr
from pipeline.stores.file_cache import FileCache

log = logging.getLogger(__name__)

SUFFIX = ".json"


@lru_cache(maxsize=1)
def ocr_code_digest() -> str:
    """The OCR package's source and the libraries under its recognisers, hashed: a change to any
    of them is another reader."""
    import cv2
    import onnxruntime  # by its module: a deployment may install onnxruntime-gpu or another build

    from pipeline.text import clauses, langid

    digest = hashlib.sha256(f"opencv {cv2.__version__} onnxruntime {onnxruntime.__version__}\n".encode())
    # and the modules outside it whose tables a reading depends on: the clause numbers a space
    # is restored after (spaces.py), the character forms that tell Chinese from Japanese (page.py)
    for module in [*sorted(Path(__file__).parent.glob("*.py")), Path(clauses.__file__), Path(langid.__file__)]:
        digest.update(module.name.encode() + b"\n" + module.read_bytes())
    return digest.hexdigest()


def page_key(gray: np.ndarray, vertical_models: dict[str, str], rec: Recogniser) -> str:
    digest = hashlib.sha256()
    for part in (ocr_code_digest(), rec.name, tesseract_version(), json.dumps(vertical_models, sort_keys=True),
                 f"{gray.dtype} {gray.shape}"):
        digest.update(part.encode() + b"\n")
    digest.update(np.ascontiguousarray(gray).tobytes())
    return digest.hexdigest()


def _dumps(result: PageOcr) -> bytes:
    return json.dumps(asdict(result), ensure_ascii=False).encode("utf-8")


def _loads(data: bytes) -> PageOcr:
    raw = json.loads(data)
    return PageOcr(blocks=[OcrBlock(text=b["text"], bbox=tuple(b["bbox"]), engine=b["engine"], direction=b["direction"])
                           for b in raw["blocks"]],
                   direction=raw["direction"], rotation=raw["rotation"], engines=raw["engines"],
                   rejected=[(text, score) for text, score in raw["rejected"]], from_cache=True)


class PageCache:
    def __init__(self, folder: Path, enabled: bool = True):
        self.enabled = enabled
        self.files = FileCache(folder, SUFFIX)

    def read(self, gray: np.ndarray, vertical_models: dict[str, str], rec: Recogniser,
             ocr: Callable[[], PageOcr]) -> PageOcr:
        """The page's reading, from the cache (``from_cache``) or by ``ocr``, then kept."""
        if not self.enabled:
            return ocr()
        key = page_key(gray, vertical_models, rec)
        try:
            data = self.files.read(key)
            if data is not None:
                return _loads(data)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # unreadable or half-foreign: read the page
            log.warning("OCR cache %s not read (%s): the page is OCRed", self.files.root, exc)
        result = ocr()
        try:
            self.files.write(key, _dumps(result))
        except OSError as exc:
            log.warning("OCR cache %s not written (%s)", self.files.root, exc)
        return result
