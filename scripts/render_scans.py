#!/usr/bin/env python3
"""Render real text as scan-like, image-only PDF pages (horizontal or vertical CJK).

The OCR path of the pipeline needs scans with known ground truth. We typeset real
paragraphs (taken from Debian's documentation packages) with Noto CJK at 300 dpi,
add mild scan artefacts (paper tone, dust, blur, a sub-degree skew) and save the
bitmap as a PDF with no text layer.

Vertical (tategaki) pages use columns top-to-bottom, right-to-left. Glyphs go through
libraqm with the OpenType ``vert`` feature, so 、。ー「」（） take their vertical forms.
ASCII is set upright in full-width forms (Ｄｅｂｉａｎ), one accepted tategaki style:
the other, sideways Latin, makes tesseract ``jpn_vert`` misread the word and its
neighbours (8.8 % vs 1.5 % CER measured on the same page).

Library use: ``read_paragraphs`` / ``select_paragraphs`` pick the text,
``render_scan`` writes the PDF. CLI: ``render_scans.py TEXT OUT.pdf --lang ja --vertical``
where TEXT holds one paragraph per line (the format of ``samples/truth/*.txt``).
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont, features

DPI = 300
A4_PX = (2480, 3508)  # 210 x 297 mm at 300 dpi
FONT_PX = 50  # 12 pt at 300 dpi
PAGE_MARGIN_PX = 240  # ~20 mm
BLOCK_MARGIN_PX = 60  # small cut-out blocks (test fixtures)
INK = 20  # near-black, as printed toner rarely scans as pure 0
PAPER = 246  # fills the corners uncovered by the skew
FONT_DIR = Path("/usr/share/fonts/opentype/noto")

# Kinsoku: never start a line with closing punctuation (hang it instead) and never
# end one with an opening bracket (move it to the next line).
NO_START = set("、。，．・：；？！ー）」』】〕〉》”’…,.;:!?)]}")
NO_END = set("（「『【〔〈《“‘([{")


@dataclass(frozen=True)
class FontSpec:
    path: Path
    index: int  # face inside the .ttc collection


# Noto CJK ships in fonts-noto-cjk; its Latin glyphs serve English too, so no other
# font package is needed.
FONTS = {
    "ja": FontSpec(FONT_DIR / "NotoSerifCJK-Regular.ttc", 0),  # Noto Serif CJK JP
    "zh": FontSpec(FONT_DIR / "NotoSansCJK-Regular.ttc", 2),  # Noto Sans CJK SC
    "en": FontSpec(FONT_DIR / "NotoSerifCJK-Regular.ttc", 0),
}


# ASCII -> full-width forms (U+FF01..U+FF5E), for upright Latin in vertical text.
FULLWIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}


@dataclass(frozen=True)
class Token:
    text: str  # as drawn; empty for the paragraph indent
    advance: int  # px along the line (horizontal) or column (vertical)


def is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def join_wrapped_lines(lines: Sequence[str]) -> str:
    """Undo hard wrapping: CJK joins directly, Latin words get a space between them."""
    text = lines[0]
    for line in lines[1:]:
        sep = "" if is_wide(text[-1]) or is_wide(line[0]) else " "
        text += sep + line
    return text


def read_paragraphs(txt_gz: Path) -> list[str]:
    """Body paragraphs of a Debian doc's plain-text rendering (e.g. maint-guide.ja.txt.gz).

    Body prose is indented by exactly four spaces; headings, list items and code are
    not, so they drop out. Footnote marks like ``^[1]`` are removed.
    """
    # The renderer indents some lines with no-break spaces; treat them as spaces.
    text = gzip.decompress(txt_gz.read_bytes()).decode("utf-8").replace("\xa0", " ")
    paragraphs = []
    for block in re.split(r"\n[ \t]*\n", text):
        lines = block.split("\n")
        if not all(line.strip() and len(line) - len(line.lstrip()) == 4 for line in lines):
            continue
        paragraph = join_wrapped_lines([line.strip() for line in lines])
        paragraph = re.sub(r"\s*\^\[\d+\]", "", paragraph)
        paragraphs.append(re.sub(r" {2,}", " ", paragraph))
    return paragraphs


def select_paragraphs(paragraphs: Sequence[str], prefixes: Sequence[str]) -> list[str]:
    """The paragraphs that start with each prefix, in the given order (each must be unique)."""
    selected = []
    for prefix in prefixes:
        matches = [p for p in paragraphs if p.startswith(prefix)]
        if len(matches) != 1:
            raise ValueError(f"{len(matches)} paragraphs start with {prefix!r}, expected 1")
        selected.append(matches[0])
    return selected


def _runs(word: str) -> list[str]:
    """'Debianパッケージ' -> ['Debian', 'パ', 'ッ', ...]: narrow runs stay whole."""
    runs: list[str] = []
    for ch in word:
        if runs and not is_wide(ch) and not is_wide(runs[-1][-1]):
            runs[-1] += ch
        else:
            runs.append(ch)
    return runs


def tokenize(paragraph: str, font: ImageFont.FreeTypeFont, vertical: bool) -> list[Token]:
    """Split into break opportunities: each wide char, each Latin word, each space."""
    tokens: list[Token] = []
    for piece in re.findall(r"\s+|\S+", paragraph):
        if piece[0].isspace():  # an ideographic space takes a whole cell, as a statute's do
            wide = piece.count("\u3000")
            tokens.append(Token(" ", round(wide * font.size if wide else font.getlength(" "))))
            continue
        for run in _runs(piece):
            if vertical:
                text = run.translate(FULLWIDTH)
                tokens.append(Token(text, round(font.getlength(text, direction="ttb", features=["vert"]))))
            else:
                tokens.append(Token(run, round(font.getlength(run))))
    return tokens


def break_lines(paragraphs: Sequence[list[Token]], length: int, indent: int) -> list[list[Token]]:
    """Greedy line (or column) breaking with kinsoku; each paragraph starts a new line."""
    lines: list[list[Token]] = []
    for tokens in paragraphs:
        line, used = [Token("", indent)], indent
        for tok in tokens:
            if tok.advance > length:
                raise ValueError(f"{tok.text!r} is longer than a whole line")
            # Closing punctuation that does not fit hangs past the line end instead.
            if used + tok.advance > length and tok.text not in NO_START:
                carry = [line.pop()] if len(line) > 1 and line[-1].text in NO_END else []
                while line and line[-1].text == " ":
                    line.pop()
                lines.append(line)
                line, used = carry, sum(t.advance for t in carry)
                if tok.text == " ":
                    continue
            line.append(tok)
            used += tok.advance
        lines.append(line)
    return lines


def _draw_lines(
    lines: Sequence[list[Token]],
    font: ImageFont.FreeTypeFont,
    size: tuple[int, int],
    margin: int,
    pitch: int,
    vertical: bool,
) -> Image.Image:
    img = Image.new("L", size, 255)
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        offset = 0
        # Vertical: columns run right to left, glyphs centred in a pitch-wide cell.
        centre = size[0] - margin - pitch * i - pitch // 2
        for tok in line:
            if vertical:
                xy = (centre - FONT_PX // 2, margin + offset)
                draw.text(xy, tok.text, font=font, fill=INK, direction="ttb", features=["vert"])
            else:
                draw.text((margin + offset, margin + pitch * i), tok.text, font=font, fill=INK)
            offset += tok.advance
    return img


def typeset(
    paragraphs: Sequence[str], lang: str, *, vertical: bool, block_em: int | None = None
) -> Image.Image:
    """Typeset onto a white A4 page, or with ``block_em`` onto a tight block whose lines
    are ``block_em`` characters long (small fixtures)."""
    if vertical and not features.check("raqm"):
        raise RuntimeError("vertical text needs Pillow built with libraqm (features.check('raqm'))")
    spec = FONTS[lang]
    font = ImageFont.truetype(str(spec.path), FONT_PX, index=spec.index)
    # Vertical text needs more room between columns than horizontal between lines.
    pitch = FONT_PX * 7 // 4 if vertical else FONT_PX * 17 // 10
    # Paragraph indent by convention: none (English), 1 em (Japanese), 2 em (Chinese).
    indent = 0 if lang == "en" else FONT_PX * (1 if lang == "ja" else 2)
    margin = PAGE_MARGIN_PX if block_em is None else BLOCK_MARGIN_PX
    # Page axes (0 = x, 1 = y): lines run along one and stack along the other.
    run_axis, stack_axis = (1, 0) if vertical else (0, 1)
    length = A4_PX[run_axis] - 2 * margin if block_em is None else block_em * FONT_PX
    tokens = [tokenize(p, font, vertical) for p in paragraphs]
    lines = break_lines(tokens, length, indent)
    if block_em is None:
        size = A4_PX
        if len(lines) * pitch > A4_PX[stack_axis] - 2 * margin:
            raise ValueError(f"text needs {len(lines)} lines, more than fit on one A4 page")
    else:
        stack = 2 * margin + len(lines) * pitch
        size = (stack, length + 2 * margin) if vertical else (length + 2 * margin, stack)
    return _draw_lines(lines, font, size, margin, pitch, vertical)


def scan_effects(img: Image.Image, seed: int) -> Image.Image:
    """Mild, deterministic scanner look: uneven paper tone, dust, softness, skew < 0.5°."""
    rng = random.Random(seed)
    w, h = img.size
    # Paper tone: coarse random field, smoothly upsampled, 240..248 gray.
    cw, ch = w // 64 + 2, h // 64 + 2
    tone = Image.frombytes("L", (cw, ch), rng.randbytes(cw * ch))
    tone = tone.point(lambda v: 240 + v * 8 // 255).resize((w, h), Image.Resampling.BICUBIC)
    out = ImageChops.multiply(img, tone)
    # Dust: 1 in 128 cells of 2x2 px gets a mid or light gray speck.
    hw, hh = w // 2, h // 2
    dust = Image.frombytes("L", (hw, hh), rng.randbytes(hw * hh))
    dust = dust.point(lambda v: 150 + v * 50 if v < 2 else 255).resize((w, h), Image.Resampling.NEAREST)
    out = ImageChops.darker(out, dust).filter(ImageFilter.GaussianBlur(0.7))
    angle = rng.uniform(-0.4, 0.4)
    return out.rotate(angle, Image.Resampling.BICUBIC, fillcolor=PAPER)


def save_image_pdf(img: Image.Image, path: Path) -> None:
    """Image-only PDF at 300 dpi; no timestamps, so equal pixels give equal bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, "PDF", resolution=DPI, quality=75, creationDate=None, modDate=None)


def render_scan(
    paragraphs: Sequence[str],
    out_pdf: Path,
    *,
    lang: str,
    vertical: bool,
    seed: int,
    block_em: int | None = None,
) -> None:
    page = typeset(paragraphs, lang, vertical=vertical, block_em=block_em)
    save_image_pdf(scan_effects(page, seed), out_pdf)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("text", type=Path, help="UTF-8 text, one paragraph per line")
    ap.add_argument("out", type=Path, help="output PDF")
    ap.add_argument("--lang", choices=sorted(FONTS), required=True)
    ap.add_argument("--vertical", action="store_true", help="tategaki: columns right to left")
    ap.add_argument("--seed", type=int, default=0, help="seed for the scan artefacts")
    ap.add_argument("--block-em", type=int, help="tight block with lines this many em long instead of A4")
    args = ap.parse_args(argv)
    paragraphs = [p for p in args.text.read_text(encoding="utf-8").splitlines() if p.strip()]
    render_scan(paragraphs, args.out, lang=args.lang, vertical=args.vertical, seed=args.seed, block_em=args.block_em)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
