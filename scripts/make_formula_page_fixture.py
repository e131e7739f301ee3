#!/usr/bin/env python3
"""Write tests/fixtures/images/formula-page.png: a page like the figure pages of the TeX
manuals that the 10,000-page run OCRed (no text layer; display formulas between prose),
typeset by pdflatex (amsmath), rendered at 300 dpi by pdftoppm, kept as a 16-gray PNG,
with its prose (formula-page.txt): what OCR should read from it. The formulas are what it
should not turn into lines of text (PP-OCR read them as 'f 1o L )' and '（）').

    .venv/bin/python scripts/make_formula_page_fixture.py   # needs pdflatex, pdftoppm
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

from make_test_fixtures import report_sizes

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "images"
PROSE = ["The long exact sequence of the pair relates the homology of the space to that of the "
         "subspace, and every map in it commutes with the boundary operator.",
         "Proofs of exactness follow from the snake lemma applied to the short exact sequence of "
         "chain complexes."]
DOCUMENT = r"""\documentclass[12pt]{article}
\usepackage{amsmath,amssymb}
\usepackage[paperwidth=16cm,paperheight=10.5cm,margin=1.0cm]{geometry}
\pagestyle{empty}
\begin{document}
\noindent %s
\[
\oint_{\partial\Omega} \omega = \int_\Omega d\omega, \qquad
\hat{f}(\xi)=\int_{-\infty}^{\infty} f(x)\,e^{-2\pi i x\xi}\,dx, \qquad
\sum_{k=0}^{n}\binom{n}{k} = 2^n
\]
\[
\Gamma \vdash \frac{\Gamma, x{:}\sigma \vdash M : \tau}{\lambda x.M : \sigma\to\tau}
\qquad \pm\sqrt{\frac{a^2+b^2}{c\,\Delta_U^{\,r}}}
\qquad \begin{pmatrix} a_{11} & a_{12}\\ a_{21} & a_{22}\end{pmatrix}
\]
\noindent %s
\end{document}
""" % tuple(PROSE)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "page.tex").write_text(DOCUMENT, encoding="utf-8")
        subprocess.run(["pdflatex", "-interaction=batchmode", "page.tex"], cwd=work, check=True,
                       capture_output=True)
        subprocess.run(["pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", "page.pdf", "page"], cwd=work,
                       check=True)
        image = Image.open(work / "page.png").convert("L")
    OUT.mkdir(parents=True, exist_ok=True)
    image.quantize(colors=16).save(OUT / "formula-page.png", dpi=(300, 300), optimize=True)
    (OUT / "formula-page.txt").write_text("\n".join(PROSE) + "\n", encoding="utf-8")
    return report_sizes([OUT / "formula-page.png", OUT / "formula-page.txt"])


if __name__ == "__main__":
    sys.exit(main())
