"""Every user-facing error of the ``rosetta`` command is one line naming the file and the
reason: exit status 2 for a rejected input, 1 for a failure; ``-v`` adds the traceback.
Run through the real CLI in a subprocess, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, ROOT, text_pdf

# Article 1 of the Universal Declaration of Human Rights, Norwegian (bokmål) text of the UN.
NORWEGIAN = ("Alle mennesker er født frie og med samme menneskeverd og menneskerettigheter. De er utstyrt med "
             "fornuft og samvittighet og bør handle mot hverandre i brorskapets ånd.\n") * 3


def python(*argv: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """``python ARGV`` with the project importable, as the ``rosetta`` command runs."""
    path = os.pathsep.join([str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": path, **(env or {})}, timeout=timeout)


def rosetta(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return python("-m", "pipeline.cli.main", *argv, env=env)


def error_lines(out: subprocess.CompletedProcess) -> list[str]:
    """stderr without the warnings third-party imports print."""
    return [line for line in out.stderr.splitlines()
            if line.startswith("rosetta ") or "Traceback" in line or line.startswith(("  File", "    "))]


def vector_only_pdf(path: Path) -> Path:
    """A page of drawn shapes and no text at all (a diagram, a form's empty frame)."""
    import matplotlib
    import matplotlib.patches

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure = plt.figure(figsize=(8.27, 11.69))
    axes = figure.add_axes((0.1, 0.1, 0.8, 0.8))
    axes.add_patch(matplotlib.patches.Circle((0.5, 0.5), 0.3, color="tab:blue"))
    axes.axis("off")
    figure.savefig(path)
    plt.close(figure)
    return path


def test_a_corrupt_file_is_one_line_and_exit_2():
    out = rosetta("chunk", str(FIXTURES / "corrupt.pdf"))
    assert out.returncode == 2
    assert error_lines(out) == [f"rosetta chunk: {FIXTURES / 'corrupt.pdf'}: rejected (corrupt_pdf): corrupt.pdf "
                                "cannot be parsed: Failed to load document (PDFium: Data format error)."]


def test_a_document_in_an_unconfigured_language_is_rejected_in_one_line(tmp_path):
    document = text_pdf(NORWEGIAN, tmp_path / "erklaering.pdf")
    out = rosetta("chunk", str(document))
    assert out.returncode == 2
    [line] = error_lines(out)
    assert line.startswith(f"rosetta chunk: {document}: rejected (unsupported_language): ")


def test_a_pdf_without_any_text_is_rejected_in_one_line(tmp_path):
    document = vector_only_pdf(tmp_path / "diagram.pdf")
    out = rosetta("chunk", str(document))
    assert out.returncode == 2
    # the drawing's strokes are not glyph-sized ink: scan cleaning leaves OCR nothing to read
    assert error_lines(out) == [f"rosetta chunk: {document}: rejected (no_text): diagram.pdf: no text in the "
                                "text layer and none found by OCR"]


def test_a_failure_is_one_line_and_exit_1_and_verbose_shows_the_traceback(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    env = {"ROSETTA__DATA_ROOT": str(blocked / "data")}  # a data root inside a file cannot be made
    out = rosetta("status", env=env)
    assert out.returncode == 1
    assert error_lines(out) == ["rosetta status: failed: NotADirectoryError: [Errno 20] Not a directory: "
                                f"'{blocked / 'data'}' (-v shows the traceback)"]
    verbose = rosetta("-v", "status", env=env)
    assert verbose.returncode == 1
    assert "Traceback (most recent call last)" in verbose.stderr
    assert verbose.stderr.rstrip().splitlines()[-1].startswith("rosetta status: failed: NotADirectoryError")


def test_known_third_party_deprecations_stay_off_the_terminal_and_others_do_not():
    # The Weaviate client's import warns through authlib and resets the warning filters; the
    # CLI drops the known messages at display, whatever the filters say.
    script = ("import warnings, pipeline.cli.main, weaviate\n"
              "warnings.warn('The ``noload`` loader strategy is deprecated and will be removed', DeprecationWarning)\n"
              "warnings.warn('a warning of our own', UserWarning)\n")
    out = python("-c", script, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "httpx module is deprecated" not in out.stderr and "noload" not in out.stderr
    assert "a warning of our own" in out.stderr
