"""The OCR module's geometry on real scan fixtures: direction, layout, rotation maps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest

from pipeline import ocr

KINDS = Path(__file__).parent / "fixtures" / "kinds"


def gray(name: str) -> np.ndarray:
    pixels = pdfium.PdfDocument(KINDS / f"{name}.pdf")[0].render(scale=300 / 72, grayscale=True).to_numpy()
    return np.ascontiguousarray(pixels[..., 0] if pixels.ndim == 3 else pixels)


@pytest.mark.parametrize("name, direction", [("ja-vertical", "vertical"), ("de-horizontal", "horizontal"),
                                             ("zh-tw-vertical-2tier", "vertical"), ("en-two-column", "horizontal")])
def test_detect_direction(name, direction):
    assert ocr.detect_direction(gray(name)) == direction


def test_layout_finds_tiers_and_columns():
    page = gray("zh-tw-vertical-2tier")
    lines = ocr.layout(page, "vertical")
    assert {l.frame for l in lines} == {0, 1}  # two tiers
    tier0 = [l for l in lines if l.frame == 0]
    assert [l.box[0] for l in tier0] == sorted((l.box[0] for l in tier0), reverse=True)  # right to left
    assert max(l.box[3] for l in tier0) < min(l.box[1] for l in lines if l.frame == 1)


def test_layout_two_columns_left_first():
    lines = ocr.layout(gray("en-two-column"), "horizontal")
    left = [l for l in lines if l.frame == 0]
    right = [l for l in lines if l.frame == 1]
    assert left and right and max(l.box[2] for l in left) < min(l.box[0] for l in right)


@pytest.mark.parametrize("degrees", [0, 90, 180, 270])
def test_unrotate_box_inverts_rotate90(degrees):
    image = np.zeros((40, 60), np.uint8)
    image[5:10, 20:30] = 255
    turned = ocr.rotate90(image, degrees)
    ys, xs = np.nonzero(turned)
    box = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    assert tuple(int(v) for v in ocr._unrotate_box(box, degrees, image.shape)) == (20, 5, 30, 10)


def test_looks_japanese():
    assert ocr.looks_japanese("パッケージを作成します")
    assert not ocr.looks_japanese("软件包系统是重要原因之一")
