"""The OCR engines: line recognisers (PP-OCR from the rapidocr wheel, or PaddleOCR on a
local model folder) and Tesseract (its version, OSD page orientation, vertical models on
one tier at a time).

PP-OCR's recogniser reads the line and column crops without a detector pass (the
layout step found the lines, and the detector was 60 % of rapidocr's time) and without
the angle classifier (``use_cls`` flips lines). Tesseract runs with OMP_THREAD_LIMIT=1
(its OpenMP threads cost four times the CPU here).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import cv2
import numpy as np
import yaml

from pipeline.config import project_home
from pipeline.ocr.geometry import Line, binarise

OSD_MIN_CONFIDENCE = 2.0  # below this, OSD's answer on part of a page is checked on all of it
# Width in pixels of a vertical column (its glyphs) handed to Tesseract's *_vert models.
# At 300 dpi a 10-18 pt column is 42-75 px; shrinking it (INTER_AREA, which also
# averages away scan noise) took 12 tuning pages (10-18 pt, serif/sans, one and two
# tiers, not the benchmark's pages) from 2.89 % to 1.74 % CER and cut Tesseract's time
# by a third; 18-28 px all gave 1.6-1.9 %, 14-16 px worse again. chi_*_vert reads the
# Latin columns of vertical Chinese at the same width.
VERT_COLUMN_PX = 20
# Recognition batches (see recognise): the recogniser's input is at least 320 x 48 px
# (REC_MIN_RATIO), rapidocr batches 6 crops, and a batch holds crops no more than
# REC_BATCH_SPREAD times as long as its shortest.
REC_MIN_RATIO = 320 / 48
REC_BATCH = 6
REC_BATCH_SPREAD = 2.0


@lru_cache(maxsize=1)
def _rapidocr():
    from rapidocr import RapidOCR

    # One onnxruntime thread: CPU time per page is what counts on a shared machine
    # (two threads cost 35 % more CPU for 15 % less wall time); scale by documents.
    return RapidOCR(params={"Global.use_cls": False, "Global.log_level": "error",
                            "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                            "EngineConfig.onnxruntime.inter_op_num_threads": 1})


def rapidocr_engine_name() -> str:
    return f"rapidocr-{version('rapidocr')}:PP-OCRv6-rec(use_cls=False)"


def recognise(crops: list[np.ndarray]) -> list[tuple[str, float]]:
    """PP-OCR recognition of line crops (text, confidence), in batches of crops of about
    the same length.

    The recogniser pads each crop of a batch with gray to the batch's longest (at least
    REC_MIN_RATIO), and a short crop padded far past its length is misread: the three-
    character column 单词。 of a zh-cn tuning page read 单词。 (0.998) alone or padded to 4x
    its length, 单。 at 8x and 删。 (0.62) at 12x, as it was in a batch with full columns.
    So a batch holds crops within REC_BATCH_SPREAD of the length of its shortest one.
    """
    return [(text, score) for text, score, _ in recognise_placed(crops)]


def recognise_placed(crops: list[np.ndarray]) -> list[tuple[str, float, list[float]]]:
    """``recognise``, with where along its crop each character of a read was emitted (the
    middle of its CTC time step, as a share of the crop's length; rapidocr's word boxes)."""
    if not crops:
        return []
    from rapidocr.ch_ppocr_rec import TextRecInput

    model = _rapidocr()._load_rec_model()
    ratios = [max(REC_MIN_RATIO, c.shape[1] / c.shape[0]) for c in crops]
    batches: list[list[int]] = []
    for i in sorted(range(len(crops)), key=ratios.__getitem__):
        if batches and len(batches[-1]) < REC_BATCH and ratios[i] <= REC_BATCH_SPREAD * ratios[batches[-1][0]]:
            batches[-1].append(i)
        else:
            batches.append([i])
    results: list[tuple[str, float, list[float]]] = [("", 0.0, [])] * len(crops)
    for batch in batches:
        out = model(TextRecInput(img=[crops[i] for i in batch], return_word_box=True))
        for i, text, score, words in zip(batch, out.txts or (), out.scores, out.word_results):
            results[i] = (text, float(score), _char_positions(text, words))
    return results


def _char_positions(text: str, words) -> list[float]:
    """Each character's place along the crop (0-1) from rapidocr's WordInfo (its words
    skip spaces, which take the place of the character before them)."""
    steps = [c for cols in (getattr(words, "word_cols", None) or []) for c in cols]
    length = float(getattr(words, "line_txt_len", 0.0) or 0.0)
    if length <= 0 or len(steps) != sum(1 for c in text if not c.isspace()):
        return []
    out, k = [], 0
    for ch in text:
        if ch.isspace():
            out.append(out[-1] if out else 0.0)
        else:
            out.append((steps[k] + 0.5) / length)
            k += 1
    return out


def detect_and_read(gray: np.ndarray) -> tuple[list[tuple[float, float, float, float]], list[str], list[float]]:
    """rapidocr's own pipeline (its detector's boxes, then the recogniser, use_cls=False):
    boxes (x0, top, x1, bottom), texts and confidences, in the detector's order."""
    out = _rapidocr()(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR))
    if out.boxes is None or out.txts is None:
        return [], [], []
    boxes = [(float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 0].max()), float(b[:, 1].max()))
             for b in np.asarray(out.boxes)]
    return boxes, list(out.txts), [float(s) for s in out.scores]


class OcrEngineError(RuntimeError):
    """The configured OCR engine cannot be loaded (package or model folder missing)."""


@dataclass(frozen=True)
class Recogniser:
    """A line recogniser: its lineage name and a function from crops to (text, confidence)."""

    name: str
    read: Callable[[list[np.ndarray]], list[tuple[str, float]]]
    # the reads with each character's place along its crop (0-1), where the engine gives it
    placed: Callable[[list[np.ndarray]], list[tuple[str, float, list[float]]]] | None = None


@lru_cache(maxsize=2)
def _paddleocr(model_dir: str) -> Recogniser:
    """PaddleOCR's TextRecognition on a local model folder, run by onnxruntime, offline.

    The folder is a PaddleOCR recognition model export: ``inference.onnx`` and the
    ``inference.yml`` that names the model (``Global.model_name``) and holds its
    character dictionary. PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK stops PaddleX from
    contacting model hosters at import; with a local ``model_dir`` nothing is downloaded.
    """
    folder = Path(model_dir)
    if not folder.is_absolute():
        folder = project_home() / folder
    missing = [n for n in ("inference.onnx", "inference.yml") if not (folder / n).is_file()]
    if missing:
        raise OcrEngineError(f"extraction.paddleocr_model_dir {folder}: {', '.join(missing)} not found "
                             f"(a PaddleOCR recognition model folder is needed)")
    os.environ["PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK"] = "True"
    try:
        from paddleocr import TextRecognition
    except ImportError as exc:
        raise OcrEngineError("extraction.ocr_engine is 'paddleocr' but the paddleocr package is not installed "
                             "(in its own environment: paddlex pins numpy, PyYAML and OpenCV below this "
                             "project's versions, see docs/extraction.md; or set extraction.ocr_engine: rapidocr)"
                             ) from exc
    with open(folder / "inference.yml", encoding="utf-8") as handle:
        model_name = yaml.safe_load(handle)["Global"]["model_name"]
    # one onnxruntime thread, as for rapidocr (PaddleX's default uses every core: 2x the CPU)
    model = TextRecognition(model_name=model_name, model_dir=str(folder), device="cpu", engine="onnxruntime",
                            engine_config={"intra_op_num_threads": 1, "inter_op_num_threads": 1})

    def read(crops: list[np.ndarray]) -> list[tuple[str, float]]:
        if not crops:
            return []
        results = model.predict(input=crops, batch_size=len(crops))
        return [(str(r["rec_text"]), float(r["rec_score"])) for r in results]

    return Recogniser(name=f"paddleocr-{version('paddleocr')}:{model_name}(onnxruntime)", read=read)


def recogniser(engine: str = "rapidocr", paddleocr_model_dir: str | None = None) -> Recogniser:
    """The line recogniser ``extraction.ocr_engine`` names (loaded once per process)."""
    if engine == "paddleocr":
        if not paddleocr_model_dir:
            raise OcrEngineError("extraction.ocr_engine 'paddleocr' needs extraction.paddleocr_model_dir")
        return _paddleocr(paddleocr_model_dir)
    return Recogniser(name=rapidocr_engine_name(), read=recognise, placed=recognise_placed)


@lru_cache(maxsize=1)
def tesseract_version() -> str:
    out = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).split()[1]


def _tesseract(image: np.ndarray, args: list[str]) -> str:
    ok, png = cv2.imencode(".png", image)
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    out = subprocess.run(["tesseract", "stdin", "stdout", *args], input=png.tobytes(), capture_output=True,
                         env=env, check=True)
    return out.stdout.decode("utf-8", "replace")


def osd_rotation(gray: np.ndarray) -> int | None:
    """Tesseract OSD: degrees clockwise to turn the page so its glyphs stand upright.

    OSD's time grows with the glyphs it sees, not the pixels: it reads the middle of the
    text area (60 % of its width and height: ~1.0 instead of ~1.4 CPU s, orientation
    right on all 29 CJK benchmark and tuning pages, confidence >= 8.8), and the whole
    page when that is too little to decide.
    """
    ink = binarise(gray)
    ys, xs = np.nonzero(ink)
    if ys.size == 0:
        return None
    cy, cx = (int(ys.min()) + int(ys.max())) // 2, (int(xs.min()) + int(xs.max())) // 2
    hy, hx = int(0.3 * (ys.max() - ys.min())), int(0.3 * (xs.max() - xs.min()))
    middle = gray[cy - hy:cy + hy, cx - hx:cx + hx]
    for region in ([middle] if min(middle.shape) >= 100 else []) + [gray]:
        small = cv2.resize(region, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        try:
            report = _tesseract(small, ["--psm", "0"])
        except subprocess.CalledProcessError:  # too few glyphs for OSD
            continue
        match = re.search(r"Rotate: (\d+)\s+Orientation confidence: ([\d.]+)", report)
        if match and (float(match.group(2)) >= OSD_MIN_CONFIDENCE or region is gray):
            return int(match.group(1))
    return None


def spaced_tier(page: np.ndarray, columns: list[Line]) -> np.ndarray:
    """One tier's columns (right to left) redrawn one column-width apart, JPEG noise
    smoothed, scaled so a column is VERT_COLUMN_PX wide.

    Tesseract ``jpn_vert`` inserts stray kana and ticks between close columns and at
    JPEG ringing; isolating the columns and a 3x3 median took one page from 2.4 % to
    1.2 % CER. Scaling: see VERT_COLUMN_PX.
    """
    top = max(0, min(c.box[1] for c in columns) - 20)
    bottom = min(page.shape[0], max(c.box[3] for c in columns) + 20)
    strips = [page[top:bottom, max(0, c.box[0] - 8):c.box[2] + 8] for c in columns]
    gap = int(np.median([s.shape[1] for s in strips]))
    canvas = np.full((bottom - top, sum(s.shape[1] for s in strips) + gap * (len(strips) + 1)), 255, np.uint8)
    x = canvas.shape[1] - gap
    for strip in strips:
        canvas[:, x - strip.shape[1]:x] = strip
        x -= strip.shape[1] + gap
    scale = VERT_COLUMN_PX / float(np.median([c.box[2] - c.box[0] for c in columns]))
    return cv2.resize(cv2.medianBlur(canvas, 3), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def tesseract_columns(gray: np.ndarray, model: str) -> list[str]:
    """Tesseract vertical model (--psm 5) on one tier: its columns, right to left."""
    text = _tesseract(gray, ["-l", model, "--psm", "5"])
    return [c.replace(" ", "") for c in text.splitlines() if c.strip()]
