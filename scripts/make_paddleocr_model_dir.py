#!/usr/bin/env python3
"""Build a PaddleOCR recognition model folder from the PP-OCRv6 model in the rapidocr wheel.

extraction.ocr_engine: paddleocr (pipeline/ocr/engines.py ``_paddleocr``) reads a local PaddleOCR
model export: ``inference.onnx`` plus the ``inference.yml`` that names the model and
holds its preprocessing and character dictionary. The rapidocr wheel already ships the
same PP-OCRv6 small recogniser as ONNX (sha256-checked here against rapidocr's
default_models.yaml), with its dictionary in the ONNX metadata ("character"), so the
folder is built offline from it: the same weights under both engines, nothing fetched
from a model hub. The folder also serves ROSETTA_PADDLEOCR_MODEL_DIR in tests/test_ocr.py.

    .venv/bin/python scripts/make_paddleocr_model_dir.py models/PP-OCRv6_small_rec
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import onnxruntime as ort
import rapidocr
import yaml

from pipeline.workspace import sha256_file

RAPIDOCR = Path(rapidocr.__file__).parent


def build(out: Path) -> Path:
    rec = yaml.safe_load((RAPIDOCR / "config.yaml").read_text(encoding="utf-8"))["Rec"]
    version, size = rec["ocr_version"], rec["model_type"]  # PP-OCRv6, small
    models = yaml.safe_load((RAPIDOCR / "default_models.yaml").read_text(encoding="utf-8"))
    entry = models["onnxruntime"][version]["rec"][f"multi_{version}_rec_{size}"]
    onnx = RAPIDOCR / "models" / Path(entry["model_dir"]).name
    if sha256_file(onnx) != entry["SHA256"]:
        raise SystemExit(f"{onnx}: sha256 differs from rapidocr's default_models.yaml")
    meta = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"]).get_modelmeta()
    characters = meta.custom_metadata_map["character"].splitlines()
    config = {  # what PaddleX's TextRecognition reads of a PaddleOCR export's inference.yml
        "Global": {"model_name": f"{version}_{size}_rec"},  # PP-OCRv6_small_rec
        "PreProcess": {"transform_ops": [
            {"DecodeImage": {"channel_first": False, "img_mode": "BGR"}},
            {"RecResizeImg": {"image_shape": list(rec["rec_img_shape"])}},  # [3, 48, 320]
        ]},
        "PostProcess": {"name": "CTCLabelDecode", "character_dict": characters},
    }
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(onnx, out / "inference.onnx")
    with open(out / "inference.yml", "w", encoding="utf-8") as handle:
        yaml.safe_dump(config, handle, allow_unicode=True, sort_keys=False)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(build(Path(sys.argv[1])))
