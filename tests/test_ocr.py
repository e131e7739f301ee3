"""The OCR module's geometry on real scan fixtures: direction, layout, rotation maps."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import cv2
import degrade_pages
import numpy as np
import pypdfium2 as pdfium
import pytest
import render_scans
import scan_pages
from PIL import Image, ImageDraw, ImageFont

from pipeline.config import ExtractionConfig
from pipeline.ocr import columns, engines, geometry, layout, noise, page, quotes
from pipeline.ocr.engines import OcrEngineError

KINDS = Path(__file__).parent / "fixtures" / "kinds"
IMAGES = Path(__file__).parent / "fixtures" / "images"


def gray(name: str) -> np.ndarray:
    pixels = pdfium.PdfDocument(KINDS / f"{name}.pdf")[0].render(scale=300 / 72, grayscale=True).to_numpy()
    return np.ascontiguousarray(pixels[..., 0] if pixels.ndim == 3 else pixels)


@pytest.mark.parametrize("name, direction", [("ja-vertical", "vertical"), ("de-horizontal", "horizontal"),
                                             ("zh-tw-vertical-2tier", "vertical"), ("en-two-column", "horizontal")])
def test_detect_direction(name, direction):
    assert geometry.detect_direction(gray(name)) == direction


def test_layout_finds_tiers_and_columns():
    page = gray("zh-tw-vertical-2tier")
    lines = layout.layout(page, "vertical")
    assert {l.frame for l in lines} == {0, 1}  # two tiers
    tier0 = [l for l in lines if l.frame == 0]
    assert [l.box[0] for l in tier0] == sorted((l.box[0] for l in tier0), reverse=True)  # right to left
    assert max(l.box[3] for l in tier0) < min(l.box[1] for l in lines if l.frame == 1)


def test_tiers_split_across_hanging_punctuation():
    """Punctuation hanging past a tier's end, in the blank band between two tiers, must
    not join the tiers (it did at 14 pt: columns read across both tiers, 84 % CER)."""
    profile = np.zeros(400, np.int64)
    profile[10:150] = 250  # top tier
    profile[155:165] = 8  # a comma hanging below one column
    profile[185:195] = 6  # and a full stop below another
    profile[220:380] = 240  # bottom tier
    frames = layout._frames(profile, breadth=2000, glyph=35)
    assert frames == [(10, 220), (220, 380)]
    profile[150:220] = 0  # a clean band: as before
    assert layout._frames(profile, breadth=2000, glyph=35) == [(10, 150), (220, 380)]
    profile[220:380] = 0
    profile[155:165] = 8  # sparse ink after the only dense band stays in its frame
    assert layout._frames(profile, breadth=2000, glyph=35) == [(10, 165)]


def test_a_run_two_columns_wide_splits_where_their_glyph_bodies_part():
    bodies = np.zeros(400, bool)
    for a, b in ((0, 50), (100, 150), (200, 260), (300, 360)):
        bodies[a:b] = True
    # specks in the gutter joined the last two columns into one run of ink
    assert layout._split_wide([(0, 50), (100, 150), (200, 360)], bodies) == [(0, 50), (100, 150), (200, 280),
                                                                             (280, 360)]
    assert layout._split_wide([(0, 50), (100, 150), (200, 260)], bodies) == [(0, 50), (100, 150), (200, 260)]


def test_a_title_across_the_page_over_two_columns_is_read_column_by_column():
    """No gutter runs from top to bottom under a title across the page (OCRmyPDF's scanned
    brochure read its two columns across, line by line); a paragraph gap that crosses both
    columns at once must not send the reader back and forth either."""
    font = scan_pages.font_for(scan_pages.PageSpec("en", "horizontal", 11, "serif"))
    image = Image.new("L", (2400, 2300), 255)
    draw = ImageDraw.Draw(image)
    for i in range(3):
        draw.text((100, 100 + 60 * i), "The title and an introduction that runs across the whole width of the page "
                                      "above both columns", font=font, fill=0)
    for column, x in enumerate((100, 1260)):
        for i in range(24):
            if i != 12:  # the same paragraph gap in both columns
                draw.text((x, 400 + 62 * i), f"Column {column + 1} line {i + 1} of the body text here", font=font, fill=0)
    lines = layout.layout(np.asarray(image, dtype=np.uint8), "horizontal")
    body = [l for l in lines if l.box[1] >= 390]
    sides = [0 if l.box[2] < 1200 else 1 for l in body]
    assert len(body) == 46 and sides == sorted(sides)  # all of the left column, then all of the right
    assert all(l.box[2] > 1300 for l in lines if l.box[3] < 390)  # the title's lines stay whole


def test_layout_two_columns_left_first():
    lines = layout.layout(gray("en-two-column"), "horizontal")
    left = [l for l in lines if l.frame == 0]
    right = [l for l in lines if l.frame == 1]
    assert left and right and max(l.box[2] for l in left) < min(l.box[0] for l in right)


@pytest.mark.parametrize("degrees", [0, 90, 180, 270])
def test_unrotate_box_inverts_rotate90(degrees):
    image = np.zeros((40, 60), np.uint8)
    image[5:10, 20:30] = 255
    turned = geometry.rotate90(image, degrees)
    ys, xs = np.nonzero(turned)
    box = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    assert tuple(int(v) for v in geometry.unrotate_box(box, degrees, image.shape)) == (20, 5, 30, 10)


def test_looks_japanese():
    assert page.looks_japanese("パッケージを作成します")
    assert not page.looks_japanese("软件包系统是重要原因之一")
    assert not page.looks_japanese("如果你需要对aｐtーlist元数据・进行")  # dashes and dots read as ー ・
    assert [page.cjk_script(t) for t in ("パッケージ", "軟件包", "Debian")] == ["ja", "zh", None]


# PP-OCR's and Tesseract chi_tra_vert's reads of columns of a code-heavy vertical
# traditional-Chinese page (the benchmark's two-tier page), and the truth.
MERGE_CASES = [
    ("smkdirdebianpatchessdquilt", "$Smkdirdebian/patchesSdquiLt", "$ mkdir debian/patches $ dquilt"),
    ("大多數第三方程序將其本身安裝在usrlocal目錄下。", "大多數第三方程序將其本身安裝在/usr/local目錄下。",
     "大多數第三方程序將其本身安裝在 /usr/local 目錄下。"),
    ("樣的目錄，而應當使用系統目錄比如usrbin，以遵循文件系", "樣的目錄,而應當使用系統目錄比如/usr/bin,以殼循文件系",
     "樣的目錄，而應當使用系統目錄比如 /usr/bin，以遵循文件系"),
    ("通常在自動編譯程序時使用make（1)程序，接着執行", "通常在自動編譯程序時使用make(1)程序,接閉執行",
     "通常在自動編譯程序時使用 make(1) 程序，接着執行"),
    ("s(DESTDIR)usrbin#Wheretoput", "$(DESTDIR)/usr/bin#Wheretoput", "$(DESTDIR)/usr/bin # Where to put"),
    ("commandsonimakeinstalli?BIN=", "commandson'makeinstalLlL'?BINU", "commands on 'make install'? BIN ="),
    # PP-OCR's full-width digits against Tesseract's ASCII ones: aligned, not replaced by =
    ("sddif=／devzerｏof５kb’filebs＝1kcount５", "$ddif=/dev/zeroof=5kb.filebs=1kcount=5",
     "$ dd if=/dev/zero of=5kb.file bs=1k count=5"),
    # a zh-tw tuning page's curly quotes (slanted ticks): PP-OCR reads " or drops them,
    # Tesseract reads 2, 2” or a curly quote; its " is the upright ＂ PP-OCR drops
    ("\"aptitudewhyrege×可以透過\"aptitude-vwhyrege×列出更多的資", "aptitudewhyregex“可以透過2”aptitude-vwhyregex“列出更多的次",
     "“aptitude why regex” 可以透過 “aptitude -v why regex” 列出更多的資"),
    ("訊。類似的資訊可以透過aｐtrdeｐendsｐaｃkage或\"aｐt-ｃaｃherdepends", "訊。類似的資訊可以透過\"aptrdependspackage\"或2apt-cacherdepends",
     "訊。類似的資訊可以透過\"apt rdepends package\" 或 “apt-cache rdepends"),
    ("標準軟體包檢視分類軟體包的方法", "標準,坦體包檢視〞分類軟體包的方法", "標準“軟體包檢視”分類軟體包的方法"),
    # upright digits PP-OCR saw on their side (0 as o, 9 as g): Tesseract's digits stand
    # (zh-tw tuning page, 13 pt sans)
    ("#mkdir-pmntloopo#mount-tauto-olooppartition·img", "#mkdir-p/mnt/loop0#mount-tauto-olooppartition.img",
     "# mkdir -p /mnt/loop0 # mount -t auto -o loop partition.img"),
    ("#mount-tisog66o-oro’loopcd.isocdrom", "#mount-tiso9660-oro,loopcd.iso/cdrom",
     "# mount -t iso9660 -o ro,loop cd.iso /cdrom"),
    # she11: a run of 1 ending a word that Tesseract read with l (zh-cn tuning page, 12 pt serif)
    ("这些she11提示符区分了所使用的帐户。在本手册中she11提示符", "这些-Shell提示符区分了所使用的帐户。在本手册中shel1提示符",
     "这些 shell 提示符区分了所使用的帐户。在本手册中 shell 提示符"),
]


@pytest.mark.parametrize("turned, upright, truth", MERGE_CASES)
def test_merge_reads_takes_symbols_upright_and_han_and_letters_turned(turned, upright, truth):
    merged, errors = columns.merge_reads(turned, upright), lambda text: scan_pages.cer(truth, text)
    assert errors(merged) <= min(errors(turned), errors(upright))
    assert errors(merged) < errors(turned) or errors(turned) == 0
    assert "閉" not in merged and "殼" not in merged  # Tesseract's Han misreads stay out


# zh-tw and zh-cn vertical tuning pages, 14 pt sans (extra pages from tuning paragraphs)
@pytest.mark.parametrize("turned, upright, simplified, merged", [
    ("設備“devしpO，或者", "設備//dev/Lp0”,或者", False, "設備“/dev/lp0”，或者"),  # “/ and /l; 0”
    ("/devconsole來描述。", "2/dev/consolLe/來描述。", False, "“/dev/console”來描述。"),  # ticks read 2 and /
    ("在Debian系統上的ps（1 指令同時", "在Debian系統上的ps(1)措令同時", False, "在Debian系統上的ps（1)指令同時"),
    ("useromo·ooos", "user0m0.000s", False, "user0m0.000s"),
    ("可以通过」ournalctl", "可以通过journalctl", True, "可以通过journalctl"),
    ("得熟悉类unix工具", "得熟悉类Unix工具", True, "得熟悉类Unix工具"),
    ("可以通过=首选项", "可以通过首选项", True, '可以通过"首选项'), ("a=b", "ab", False, "a=b"),
])
def test_merge_reads_quote_ticks_kana_and_case(turned, upright, simplified, merged):
    assert columns.merge_reads(turned, upright, simplified) == merged


@pytest.mark.parametrize("read, text", [
    ("[Unit]Desc", "“Unit]Desc"), ('"$x"];the', '"$x"];the'), ("用[sudo]命令", "用“sudo”命令"),
    ("通过”首选项”→『通用』", '通过"首选项"→“通用”'), ('noexpandtab"”和', 'noexpandtab"和'),
])
def test_simplified_pages_read_curly_quotes_as_ascii_and_corners_as_curly(read, text):
    assert page.simplified_quotes(read) == text


def test_kana_in_chinese_columns_are_latin_and_quotes_after_symbols_close():
    assert columns.latin_kana("sources・listしsメュ") == "sources.listlsX1"
    assert columns.quote_direction("。“..“目錄") == "。“..”目錄" and columns.quote_direction("abc,“中文") == "abc,“中文"
    assert "內裝參".translate(columns.TRADITIONAL_FORMS) == "內裝參" == "内装参".translate(columns.TRADITIONAL_FORMS)


def test_merge_reads_keeps_identical_reads():
    assert columns.merge_reads("在Debian中，這是", "在Debian中,這是") == "在Debian中，這是"


# --- scan damage (pipeline.ocr.noise, deskew) --------------------------------------------
def ink(image: np.ndarray) -> np.ndarray:
    return geometry.binarise(image) > 0


def test_a_page_of_specks_and_salt_and_pepper_yields_no_text():
    paper = np.full((1200, 900), 238, np.uint8)
    dusty, _ = degrade_pages.degrade(paper, "dust", "severe", seed=1)
    noisy, _ = degrade_pages.degrade(dusty, "salt_pepper", "severe", seed=2)
    assert np.count_nonzero(ink(noisy)) > 10_000
    assert noise.clean_page(noisy) is None
    assert page.ocr_page(noisy, {}).blocks == []


def test_stray_specks_go_and_the_dots_of_text_stay():
    clean = gray("de-horizontal")
    dusty, _ = degrade_pages.degrade(clean, "dust", "severe", seed=3)
    cleaned = noise.clean_page(dusty)
    far = cv2.dilate(ink(clean).astype(np.uint8), np.ones((31, 31), np.uint8)) == 0  # 15 px from any ink
    assert np.count_nonzero(ink(dusty) & far) > 1000
    # what is left far from text: clusters of specks as big as a period (kept as dots)
    assert np.count_nonzero(ink(cleaned) & far) < 0.03 * np.count_nonzero(ink(dusty) & far)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(ink(clean).astype(np.uint8))
    text = ink(clean) & (stats[labels, cv2.CC_STAT_AREA] >= 9)  # not the fixture's own 1-px dust
    painted = text & (cleaned == 255)  # commas, periods, i-dots, umlauts, quotes: none painted out
    assert np.count_nonzero(painted) == 0


def test_bleed_through_goes_and_the_text_stays():
    clean = gray("ja-vertical")
    bled, _ = degrade_pages.degrade(clean, "bleed", "moderate", seed=6)
    cleaned = noise.clean_page(bled)
    far = cv2.dilate(ink(clean).astype(np.uint8), np.ones((7, 7), np.uint8)) == 0  # 3 px from any ink
    back = far & (bled < 220)  # the back of the sheet where it shows (the paper is 243-247)
    assert np.count_nonzero(back) > 5_000
    assert np.count_nonzero(cleaned[back] < 220) < 0.01 * np.count_nonzero(back)
    text = clean < 128
    assert np.array_equal(cleaned[text], bled[text])  # no stroke of the front painted out
    # the back showing through less, or a blurred page's faint halos: nothing touched
    for degradation, severity in (("bleed", "mild"), ("blur", "moderate")):
        damaged, _ = degrade_pages.degrade(clean, degradation, severity, seed=7)
        assert noise.clear_bleed_through(damaged) is damaged


TIGHT_LINES = ["Congress, the propriety of limiting the power of ministers to judge",
               "De Long, the Secretary of State, July 27, 1871, by the Department",
               "which jointly govern the consular courts in Japan, as approved by",
               "Hamilton Fish, Washington, who kept the regulation in its draft."]


def tight_paragraph(pitch_em: float) -> tuple[np.ndarray, list[str]]:
    """An English paragraph (14 pt serif at 300 dpi) set solid, as old legal prints are: at
    0.9 em a line's descenders (g, J, p, y) reach the rows of the next line's ascenders."""
    font = scan_pages.font_for(scan_pages.PageSpec("en", "horizontal", 14, "serif"))
    pitch = round(pitch_em * font.size)
    image = Image.new("L", (2000, 120 + pitch * len(TIGHT_LINES)), 255)
    for i, text in enumerate(TIGHT_LINES):
        ImageDraw.Draw(image).text((60, 60 + i * pitch), text, font=font, fill=0)
    return np.asarray(image, dtype=np.uint8).copy(), TIGHT_LINES


def test_lines_set_solid_are_laid_out_one_by_one_and_read():
    solid, text = tight_paragraph(0.9)
    rows = (geometry.binarise(solid) > 0).sum(axis=1)
    assert np.count_nonzero(rows[np.flatnonzero(rows)[0]:np.flatnonzero(rows)[-1]] == 0) == 0  # no blank row
    assert len(layout.layout(solid, "horizontal")) == len(text)
    assert scan_pages.cer("\n".join(text), "\n".join(b.text for b in page.ocr_page(solid, {}).blocks)) <= 2.0
    spaced, _ = tight_paragraph(1.4)  # with blank rows between lines: as before
    assert len(layout.layout(spaced, "horizontal")) == len(text)


def test_a_thick_run_is_cut_where_its_ink_thins_and_a_line_with_descenders_is_not():
    profile = np.zeros(300, np.int64)
    profile[20:60] = 900  # a line
    profile[60:66] = [60, 30, 12, 20, 45, 70]  # one line's descenders meet the next one's ascenders
    profile[66:110] = 880
    assert layout._split_sparse([(20, 110)], profile, glyph=30) == [(20, 63), (63, 110)]
    profile[66:110] = 0  # a line and its descenders alone
    assert layout._split_sparse([(20, 66)], profile, glyph=30) == [(20, 66)]
    profile[150:230] = 700  # a heading set large: no thin rows
    assert layout._split_sparse([(150, 230)], profile, glyph=30) == [(150, 230)]


FORM_CELLS = [["Artikel", "Kabellänge", "Werkstatt", "Bestand"], ["Stecker", "zwei Meter", "Hamburg", "vorhanden"],
              ["Kupplung", "fünf Meter", "Bremen", "bestellt"]]


def ruled_form() -> np.ndarray:
    """A scanned German form: a table ruled in thin lines, and the dark edge of the scanner
    lid down the left side and across the top, as a photographed page has."""
    font = scan_pages.font_for(scan_pages.PageSpec("de", "horizontal", 12, "sans"))
    image = Image.new("L", (2200, 1400), 255)
    draw = ImageDraw.Draw(image)
    draw.text((200, 200), "Datum: 3. Mai", font=font, fill=0)
    x0, y0, width, height = 200, 320, 440, 160
    for r, row in enumerate(FORM_CELLS):
        for c, cell in enumerate(row):
            draw.text((x0 + c * width + 30, y0 + r * height + 50), cell, font=font, fill=0)
    for r in range(len(FORM_CELLS) + 1):
        draw.line([(x0, y0 + r * height), (x0 + 4 * width, y0 + r * height)], fill=0, width=3)
    for c in range(5):
        draw.line([(x0 + c * width, y0), (x0 + c * width, y0 + 3 * height)], fill=0, width=3)
    draw.rectangle([0, 0, 50, 1399], fill=30)
    draw.rectangle([0, 0, 2199, 40], fill=30)
    return np.asarray(render_scans.scan_effects(image, 11), dtype=np.uint8).copy()


def test_a_forms_rulings_and_the_scan_border_go_and_its_cells_are_read():
    form = ruled_form()
    cleaned = noise.clean_page(form)
    across = cv2.morphologyEx(ink(cleaned).astype(np.uint8), cv2.MORPH_OPEN, np.ones((1, 200), np.uint8))
    down = cv2.morphologyEx(ink(cleaned).astype(np.uint8), cv2.MORPH_OPEN, np.ones((200, 1), np.uint8))
    assert not across.any() and not down.any()  # no rule, no edge left
    read = "\n".join(b.text for b in page.ocr_page(form, {}).blocks)
    assert "Datum" in read
    assert all(cell in read for row in FORM_CELLS for cell in row), read
    # a page without rulings is left as it is
    clean = gray("de-horizontal")
    assert noise.clear_rulings(clean) is clean


def test_a_page_crossed_out_corner_to_corner_is_read_under_the_cross():
    """A voided form is crossed out: the two strokes join every line they pass into one blob,
    and the page read as nothing (pymupdf's test_3863.pdf: 48 letters and digits of a typed
    form). The cross goes as rulings do; the glyphs it ran through lose a few pixels."""
    plain = gray("de-horizontal")
    truth = (KINDS / "de-horizontal.txt").read_text(encoding="utf-8")
    crossed = plain.copy()
    h, w = crossed.shape
    cv2.line(crossed, (0, 0), (w - 1, h - 1), 0, 5)
    cv2.line(crossed, (w - 1, 0), (0, h - 1), 0, 5)
    read = "\n".join(b.text for b in page.ocr_page(crossed, {}).blocks)
    assert scan_pages.cer(truth, read) < 10, read


def test_no_slanted_stroke_is_found_in_text_or_a_title_set_large():
    """A title's letters are thick where a rule is thin: a heading seven times the body's size
    (its A, V, W and X strokes at a slant, longer than SLANT_EM glyphs of the body) stays, and
    neither a page of text nor a skewed one has a slanted rule."""
    body = gray("de-horizontal")
    title = Image.new("L", (body.shape[1], 800), 255)
    big = ImageFont.truetype(scan_pages.font_for(scan_pages.PageSpec("de", "horizontal", 12, "sans")).path, 330)
    ImageDraw.Draw(title).text((20, 200), "AVWX", font=big, fill=0)
    page_with_title = np.vstack([np.asarray(title), body])
    skewed, _ = degrade_pages.degrade(body, "skew", "severe", seed=3)
    for image in (body, page_with_title, skewed):
        ink = geometry.binarise(image)
        _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        assert not noise.slanted_rules(ink, noise.glyph_size(stats)).any()


def test_rulings_are_looked_for_no_longer_than_the_page(monkeypatch):
    """A wide page whose only ink is a frame (its one "glyph" as tall as the page): the frame's
    long sides are rulings and go; no opening is asked for with a kernel longer than the page
    (OpenCV's costs the kernel's length a pixel: pymupdf's test-4000-links.pdf, a 30 x 42 inch
    page, took 73 s in it)."""
    framed = np.full((600, 4000), 255, np.uint8)
    cv2.rectangle(framed, (5, 5), (3994, 594), 0, 3)
    kernels = []
    opening = cv2.morphologyEx

    def spy(image, op, kernel, *args, **kwargs):
        kernels.append(kernel.shape)
        return opening(image, op, kernel, *args, **kwargs)

    monkeypatch.setattr(noise.cv2, "morphologyEx", spy)
    cleared = noise.clear_rulings(framed)
    assert kernels and all(h <= 600 and w <= 4000 for h, w in kernels), kernels
    assert (cleared[2:9, 20:3980] == 255).all() and (cleared[20:580, 3:8] < 128).any()  # the sides stay: 600 px < 5 glyphs


def test_lines_read_from_formulas_are_rejected_and_the_prose_is_kept():
    """A page like the TeX manuals' figure pages (scripts/make_formula_page_fixture.py):
    prose, then two lines of display formulas, then prose."""
    formulas = cv2.imread(str(IMAGES / "formula-page.png"), cv2.IMREAD_GRAYSCALE)
    prose = (IMAGES / "formula-page.txt").read_text(encoding="utf-8")
    result = page.ocr_page(formulas, {})
    assert len(result.rejected) == 2  # both formula lines, each scored under the bar
    assert all(score < page.MIN_LINE_SCORE for _, score in result.rejected)
    assert scan_pages.cer(prose, "\n".join(b.text for b in result.blocks)) <= 1.0  # no junk line between


def turned_column(text: str) -> np.ndarray:
    """A vertical zh-cn column (14 pt sans, 300 dpi) turned as line_crop turns columns."""
    font = scan_pages.font_for(scan_pages.PageSpec("zh-cn", "vertical", 14, "sans"))
    column = Image.new("L", (font.size + 40, font.size * len(text) + 40), 255)
    for i, glyph in enumerate(text):
        ImageDraw.Draw(column).text((20, 20 + i * font.size), glyph, font=font, fill=0)
    return cv2.cvtColor(np.ascontiguousarray(np.rot90(np.asarray(column))), cv2.COLOR_GRAY2BGR)


def test_a_short_column_read_beside_a_full_one_is_read_as_it_is_alone():
    # in one batch, the short crop was padded to the full one's length and read 哥。 (0.68)
    full = "这与实际安装的系统所使用的提示符很有可能会不同" * 2
    reads = engines.recognise([turned_column("单词。"), turned_column(full)])
    assert [text for text, _ in reads] == ["单词。", full]
    assert min(score for _, score in reads) > 0.99


LISTING = ("$ touch foo bar $ chmod u=rw,go=r foo $ chmod 644 bar $ ls -l foo bar "
           "-rw-r--r-- 1 penguin penguin 17 Oct 16 21:39 bar -rw-r--r-- 1 penguin penguin 12 Oct 16 21:35 foo "
           "$ chmod 755 foo $ ls -l foo -rwxr-xr-x 1 penguin penguin 12 Oct 16 21:35 foo")
SHORT_PROSE = ["这种数字模式使用八进制数来描述文件权限。", "什么权限将应用到新建文件受限制。", "一些著名的组允许其成员访问某些文件。",
               "这些命令的输出显示了文件的权限。", "新建文件的权限由内置命令决定。", "系统上的真实值可能有所不同。",
               "参考下一节自定义时间和日期的显示。", "每个用户都有自己的主目录。"]


def test_a_vertical_chinese_page_whose_longest_columns_are_code_is_read_as_chinese():
    # the orientation sample (the four longest columns) holds no Han here
    spec = scan_pages.PageSpec("zh-cn", "vertical", 12, "serif", page_px=(1900, 1300), margin_px=60)
    image, used = scan_pages.fill_page([LISTING] + SHORT_PROSE, spec)
    assert used == [LISTING] + SHORT_PROSE
    scan = np.asarray(render_scans.scan_effects(image, 7), dtype=np.uint8)
    result = page.ocr_page(scan, {"zh": "chi_sim_vert", "zh-Hant": "chi_tra_vert"})
    assert any(engine.endswith("chi_sim_vert:psm5") for engine in result.engines)  # the Chinese route, merged
    assert scan_pages.cer("\n".join(used), "\n".join(b.text for b in result.blocks)) <= 2.0  # 3.1 % without it


def test_uneven_paper_and_skew_keep_the_lines():
    clean = gray("de-horizontal")
    lines = len(layout.layout(clean, "horizontal"))
    dark, _ = degrade_pages.degrade(clean, "illumination", "severe", seed=4)
    assert len(layout.layout(noise.flatten_paper(dark), "horizontal")) == lines
    skewed, _ = degrade_pages.degrade(clean, "skew", "severe", seed=5)
    assert len(layout.layout(geometry.deskew(skewed, "horizontal"), "horizontal")) == lines


@pytest.mark.parametrize("read, text", [
    ("apt一get", "apt-get"), ("ｃｏｍｍａｎｄーｉｎ", "ｃｏｍｍａｎｄ-ｉｎ"), ("dh_auto", "dh_auto"), ("root|account", "root-account"),
    ("的命令°这些", "的命令。这些"), ("︒﹁字﹂︑", "。「字」、"),
    ("一二三", "一二三"), ("统一", "统一"), ("5°C", "5°C"),  # real 一 and degree signs stay
])
def test_vertical_punctuation_is_put_back(read, text):
    assert page.vertical_punctuation(read) == text


@pytest.mark.parametrize("read, before, text", [
    ("Perlゃやゃ", "", "Perlや"), ("GNUゃLinux", "", "GNUやLinux"), ("ゃBSD", "U", "やBSD"),
    ("きゃくしゅじゅつ", "", "きゃくしゅじゅつ"), ("ょう", "し", "ょう"),  # after an i-row kana: small
    ("デュアル", "", "デュアル"), ("ソフトウェアのチュートリアル", "", "ソフトウェアのチュートリアル"),
    ("カャ", "", "カヤ"), ("やゃ", "", "や"), ("GCCややLinux", "", "GCCやLinux"), ("ややこしい", "", "ややこしい"), ("telnetェスケープ", "", "telnetエスケープ"), ("8164っの", "", "8164つの"), ("言って", "", "言って"),
])
def test_small_kana_follow_an_i_row_kana_only(read, before, text):
    assert columns.small_kana(read, before) == text


def column_image(text: str) -> np.ndarray:
    """A 12 pt column at 300 dpi set as the scan renderer sets it (upright full-width Latin)."""
    from PIL import Image, ImageDraw, ImageFont
    from render_scans import FONT_DIR, FULLWIDTH

    font = ImageFont.truetype(str(FONT_DIR / "NotoSansCJK-Regular.ttc"), 50, index=0)
    image = Image.new("L", (120, 60 * len(text) + 40), 255)
    ImageDraw.Draw(image).text((30, 10), text.translate(FULLWIDTH), font=font, fill=0, direction="ttb",
                               features=["vert"])
    return ink_box(np.asarray(image))


def ink_box(image: np.ndarray) -> np.ndarray:
    """The image cut to the box of its ink."""
    dark = np.argwhere(image < 128)
    (y0, x0), (y1, x1) = dark.min(axis=0), dark.max(axis=0) + 1
    return image[y0:y1, x0:x1]


@pytest.mark.parametrize("text, strokes", [("smtp_generic_maps", 2), ("apt-get", 0), ("dh_auto", 1),
                                           ("システムのーつ", 0), ("ls-l", 0), ("いりけレしル", 0)])
def test_low_lines_are_strokes_at_the_left_edge_of_a_column(text, strokes):
    assert columns.low_lines(column_image(text)) == strokes


@pytest.mark.parametrize("text, read, cased", [
    # jpn_vert's misreads of upright Latin (ja 16 pt serif tuning page): the heights put them right
    ("コマンドはscreenとsshをnameで、OSはXorgのshell", "コマンドはScreenとSShをnameで、OSはxorgのShell",
     "コマンドはscreenとsshをnameで、OSはXorgのshell"),
    # and a letter jpn_vert read twice in two cases, which PP-OCR reads once, is one
    ("コマンドはscreenとsshをnameで、OSはXorgのshell", "コマンドはScCreenとSShをnameで、OSはxXorgのShell",
     "コマンドはscreenとsshをnameで、OSはXorgのshell"),
    ("OSはXorg", "osはxorg", "osはxorg"),  # no x-height letters to judge by: the read stands
])
def test_upright_letters_take_the_case_their_height_says(text, read, cased):
    column = column_image(text)  # PP-OCR (the real recogniser) places the letters
    box = (0, 0, column.shape[1], column.shape[0])
    assert columns.letter_cases(column, [box], [read], engines.recognise_placed) == [cased]


def sideways_column(before: str, latin: str, after: str) -> np.ndarray:
    """A column of upright kana around a Latin phrase set sideways (turned 90 degrees
    clockwise, proportional), as tategaki sets words of Latin text."""
    from render_scans import FONT_DIR

    font = ImageFont.truetype(str(FONT_DIR / "NotoSansCJK-Regular.ttc"), 50, index=0)
    phrase = Image.new("L", (int(font.getlength(latin)) + 20, 70), 255)
    ImageDraw.Draw(phrase).text((10, 0), latin, font=font, fill=0)
    parts = [column_image(before), np.asarray(phrase.rotate(-90, expand=True)), column_image(after)]
    width = max(p.shape[1] for p in parts) + 20
    column = np.full((sum(p.shape[0] + 10 for p in parts), width), 255, np.uint8)
    y = 0
    for part in parts:
        x = (width - part.shape[1]) // 2
        column[y:y + part.shape[0], x:x + part.shape[1]] = part
        y += part.shape[0] + 10
    return ink_box(column)


def test_sideways_latin_keeps_the_case_it_was_read_in():
    # along the column a sideways letter's extent is its width: the S of OS is as narrow as
    # an x-height letter, and without the ascender check it came back lower-case
    column = sideways_column("コマンドは", "run the OS X shell and more", "です")
    read = "コマンドはruntheOSXshellandmoreです"
    box = (0, 0, column.shape[1], column.shape[0])
    assert columns.letter_cases(column, [box], [read], engines.recognise_placed) == [read]


@pytest.mark.parametrize("read, strokes, text", [
    ("command-_in-_root_account", 0, "command-in-root-account"), ("apt-_-get", 0, "apt--get"),
    ("--_force-_all", 0, "--force-all"), ("initrd_tools", 0, "initrd-tools"),
    ("smtp_generic_maps", 2, "smtp_generic_maps"), ("dh_auto-_configure", 1, "dh_auto-configure"),
])
def test_hyphens_read_as_low_lines_are_put_back(read, strokes, text):
    assert columns.hyphens(read, strokes) == text


@pytest.mark.parametrize("read, text", [
    ("录下运行”grep-e", "录下运行“grep-e"), ("regex“可以透過”aptitude", "regex”可以透過“aptitude"),
    ("“動作”→“取消", "“動作”→“取消"),  # no Latin beside them, nor punctuation: left
    ("過濾框架“)的", "過濾框架”)的"), ("正規表達式“），", "正規表達式”），"),  # before closing punctuation
    ("（”動作", "（“動作"), ("以“.”開頭", "以“.”開頭"),  # after an opening bracket; code quotes stay
])
def test_curly_quotes_open_before_a_latin_word_and_close_after_it(read, text):
    assert columns.quote_direction(read) == text


# --- the optional PaddleOCR engine ------------------------------------------------------
PADDLEOCR_INSTALLED = importlib.util.find_spec("paddleocr") is not None


def test_paddleocr_engine_needs_a_model_folder(tmp_path):
    with pytest.raises(OcrEngineError, match="inference.onnx, inference.yml not found"):
        engines.recogniser("paddleocr", str(tmp_path))
    with pytest.raises(ValueError, match="paddleocr_model_dir"):
        ExtractionConfig(min_text_layer_chars=25, ocr_dpi=300, ocr_max_megapixels=150, max_pages=10, ocr_cache_mb=0,
                         ocr_engine="paddleocr")


@pytest.mark.skipif(PADDLEOCR_INSTALLED, reason="paddleocr is installed: the engine loads instead")
def test_paddleocr_selected_but_absent_is_a_clear_error(tmp_path):
    (tmp_path / "inference.onnx").write_bytes(b"")
    (tmp_path / "inference.yml").write_text("Global: {model_name: PP-OCRv5_server_rec}\n")
    with pytest.raises(OcrEngineError, match="paddleocr package is not installed"):
        engines.recogniser("paddleocr", str(tmp_path))


@pytest.mark.skipif(not (PADDLEOCR_INSTALLED and os.environ.get("ROSETTA_PADDLEOCR_MODEL_DIR")),
                    reason="needs paddleocr and ROSETTA_PADDLEOCR_MODEL_DIR (a local recognition model folder)")
def test_paddleocr_engine_reads_the_lines_rapidocr_reads():
    rec = engines.recogniser("paddleocr", os.environ["ROSETTA_PADDLEOCR_MODEL_DIR"])
    assert rec.name.startswith("paddleocr-")
    page = gray("de-horizontal")
    crops = [layout.line_crop(page, line.box, "horizontal") for line in layout.layout(page, "horizontal")]
    truth = (KINDS / "de-horizontal.txt").read_text(encoding="utf-8")
    assert scan_pages.cer(truth, "\n".join(t for t, _ in rec.read(crops))) < 1.5


def test_a_tier_tesseract_reads_with_a_column_split_is_read_again_in_halves(monkeypatch):
    truth = ["列一", "列二", "ls -l foo", "列四", "列五"]

    def tesseract_lines(tier: list[int], model: str) -> list[str]:
        # Tesseract splits the listing's column in two whenever it reads it with others
        if len(tier) > 1 and 2 in tier:
            return [piece for i in tier for piece in (["ls -l", "foo"] if i == 2 else [truth[i]])]
        return ["ls -l", "foo"] if tier == [2] else [truth[i] for i in tier]

    monkeypatch.setattr(page, "spaced_tier", lambda image, columns: [c.box[0] for c in columns])
    monkeypatch.setattr(page, "tesseract_columns", tesseract_lines)
    tier = [geometry.Line(box=(i, 0, i + 1, 10), frame=0, starts_paragraph=False) for i in range(5)]
    assert page._vertical_tiers(np.zeros((10, 10), np.uint8), tier, "chi_sim_vert") == \
        {0: "列一", 1: "列二", 2: "ls -lfoo", 3: "列四", 4: "列五"}


def test_a_column_under_the_score_bar_stays_on_a_vertical_chinese_page_where_tesseract_reads_it_alike(monkeypatch):
    # PP-OCR sees a column of code on its side and scores it low (an `ls -li` listing after
    # moderate JPEG: 0.61); Tesseract reads it upright and alike, so it is text. A drawing's
    # column is read as garbage by both, differently, and stays out.
    reads = [("这是正文的一列。", 0.98), ("-rw-r--r--1rootroot02008-09-15", 0.61), ("=(a++1wecpend", 0.40)]
    upright = {10: "-rw-r--r-- 1 root root 0 2008-09-15", 20: "口丨"}

    class Reader:
        name = "pp-ocr"

        def read(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
            return reads

    monkeypatch.setattr(page, "spaced_tier", lambda image, columns: [c.box[0] for c in columns])
    monkeypatch.setattr(page, "tesseract_columns", lambda tier, model: [upright[x] for x in tier])
    tier = [geometry.Line(box=(10 * i, 0, 10 * i + 5, 50), frame=0, starts_paragraph=False) for i in range(3)]
    (kept, texts, names), rejected = page._read(np.full((60, 40), 255, np.uint8), tier, "vertical", "zh",
                                                {"zh": "chi_sim_vert"}, Reader())
    assert kept == tier[:2] and "".join(texts[1].split()) == "-rw-r--r--1rootroot02008-09-15"
    assert "chi_sim_vert" in names[1] and rejected == [reads[2]]
    # on a page of another script (no second reader) the bar alone decides, as before
    (kept, _, _), rejected = page._read(np.full((60, 40), 255, np.uint8), tier, "horizontal", None, {}, Reader())
    assert kept == tier[:1] and rejected == reads[1:]


# the reads of the orientation sample (the heads of the four longest columns) of tuning
# pages with code, and of the heads of the next eight columns (MORE_*)
ZH_CN_SAMPLE = "=tune2fs-codevUUェD=８17bae6b-45dBtrfs狀态能够在Ｄebianmmkfs (8)在Linu×系统上创建"
ZH_TW_SAMPLE = "bs＝ュｃｏunt=oif＝\\dev\\zeloopnew.imnew#cdold#類似的，可引導的ISO9660映象檔案，\"c這裡的ェsｏlｉnu×bｏｏｔlｏade"
MORE_ZH_TW = ("#mkdiroldmkdir#kpartx-a-vdisk·.mnt/loopo..·hack＃mkdir-ｐ/mnt/しｏｏpｏ＃m可以使用迴圈裝置通過下列方式掛載和"
              "·hack···hack···hack或者，你也可以使用kpart×軟體包中Ｓddbs＝ュｃｏuｎt川ｏ")


def test_kana_misread_in_code_do_not_make_a_chinese_page_japanese():
    # a kana among Latin and symbols (UUID read UUェD, bs=1 read bs=ュ) does not count
    assert page.looks_japanese("=tune2fs-codevUUD=８17bae6b-45dBtrfs狀ュ") is True  # beside Han it does
    assert page.cjk_script(ZH_CN_SAMPLE) == "zh"
    assert page.cjk_script("GNUやLinuxやBSD") is None
    # one kana beside Han (這裡的ェsolinux): judged with eight more columns, which hold no kana but lone ones
    assert page.cjk_script(ZH_TW_SAMPLE) == "ja"
    assert page.page_script(ZH_TW_SAMPLE, lambda: MORE_ZH_TW) == "zh"
    # a Japanese sample decides alone; one with a kana or two is judged with more lines
    assert page.page_script("パッケージを作成します。この節では", lambda: pytest.fail("read more")) == "ja"
    assert page.page_script("Debianのaptを設定", lambda: "パッケージを作成します") == "ja"
    assert page.page_script("=tune2fs-codev", lambda: "文件系统上创建") == "zh"  # no Han or kana: as before


def test_merge_reads_tall_zeros_dollars_read_twice_comma_ticks_and_traditional_p():
    # zh-tw and zh-cn tuning pages (13 and 14 pt sans, 12 and 16 pt serif; seventh session)
    assert columns.merge_reads("bs=1count=oif=/dev/zero", "bsHLcounthOifU/dev/zero") == "bs=1count=0if=/dev/zero"
    assert columns.merge_reads("/mnt/loopo中", "/mnt/loopO中") == "/mnt/loop0中"
    assert columns.merge_reads("Formattingobjects", "FormattingObjects") == "FormattingObjects"
    assert columns.merge_reads("Unixo", "UNixO") == "Unix0" and columns.merge_reads("Ao", "AO") == "AO"
    assert columns.merge_reads("sddbs", "$Sddbs") == "$ddbs" == columns.merge_reads("sddbs", "S$ddbs")
    assert columns.dollars("bozo/barS$rmbar$Slsof") == "bozo/bar$rmbar$lsof" and columns.dollars("'\\S$'") == "'\\S$'"
    assert columns.merge_reads("您可以通過選單：動作", "您可以通過選單:,動作。") == "您可以通過選單：“動作"
    assert columns.merge_reads("ISC，APache，", "ISC,Apache,", traditional=True) == "ISC，Apache，"
    assert columns.merge_reads("AllowTcpForwarding", "AllowTcPForwarding", simplified=True) == "AllowTcpForwarding"


def test_merge_reads_closing_paren_and_column_end_stop_only_tesseract_read():
    # extra zh-cn tuning page (16 pt serif, tuning-pool start 100; eighth session): PP-OCR drops
    # the ) after Han and the 。 after a closing quote at a column's end, Tesseract reads them
    assert columns.merge_reads("换行符作为空白符，并将", "换行符(作为空白竺),并将", True) == "换行符(作为空白符)，并将"
    assert columns.merge_reads("『TO]TEXT』", "[TO_TEXT]=。", True) == "『TO_TEXT』。"
    assert columns.merge_reads("『TO]TEXT』", "[TO_TEXT]=。", traditional=True) == "『TO_TEXT』"  # not traditional
    assert columns.merge_reads("您可以通過選單：動作", "您可以通過選單:,動作。") == "您可以通過選單：“動作"  # no quote read
    # a quote after Latin and before a closing paren closes (“SHELL BUILTIN COMMANDS”）。)
    assert columns.quote_direction("COMMANDS“)。") == "COMMANDS”)。"


def _read_typeset_vertical(paragraphs: list[str], lang: str, size: int, face: str) -> str:
    """The paragraphs typeset as one vertical scan (the degradation suite's way), read back."""
    image, used = scan_pages.fill_page(paragraphs, scan_pages.PageSpec(lang, "vertical", size, face,
                                                                       page_px=(900, 1300), margin_px=60))
    assert used == paragraphs
    scan = np.asarray(render_scans.scan_effects(image, 7), dtype=np.uint8)
    result = page.ocr_page(scan, {"zh": "chi_sim_vert", "zh-Hant": "chi_tra_vert"})
    return "".join(b.text for b in result.blocks).replace("\n", "")


QUOTED_ZH_TW = ["如果您不喜歡，您可以通過選單“動作”來取消它。標準“軟體包檢視”分類軟體包的方法與其他工具有點像。",
                "你需要在視覺化介面中按下“確定”鍵讓所有的已安裝軟體包升級到可用版本。",
                "這將更新檔案庫資訊的本地副本，並以選單的形式全螢幕顯示“軟體包列表”。"]


def test_curly_quotes_both_readers_drop_in_traditional_columns_are_found_by_their_ticks():
    # PP-OCR and chi_tra_vert read this page 選單動作”, 標準軟體包檢視”, 按下，確定“鍵, 顯示軟體包列表”
    # (4.2 % CER): the quote ticks in the column image put the quotes back (ocr.quotes)
    text = _read_typeset_vertical(QUOTED_ZH_TW, "zh-tw", 14, "sans")
    for quoted in ("選單“動作”來", "標準“軟體包檢視”分類", "按下“確定”鍵", "顯示“軟體包列表”。"):
        assert quoted in text
    # the two short bars atop 單 at a column's head are no upright ＂
    assert '"' not in text


QUOTED_ZH_CN = ["要求系统管理员执行的操作，须用祈使句描述，如“在终端中输入命令字符串后，键入回车键。”",
                "文件名将由双引号括起来的打印机字体进行标记，就像 \"/etc/passwd\"。对于配置文件，你可以输入下列的命令。",
                "所有的命令示例都是运行在英语语言环境“LANG=en_US.UTF8”下的。"]


def test_corner_quotes_of_simplified_columns_are_found_as_outlines():
    # read 如"在...键入回车键。 and "LANG=en_US.UTF8下的 without (2.9 % CER): the faces set “ ” as
    # white corners, found in the column image (no 。 kept after the closing one: 键。”, not 键。”。)
    text = _read_typeset_vertical(QUOTED_ZH_CN, "zh-cn", 12, "serif")
    assert "如“在终端" in text and text.count("键入回车键。”") == 1 and "键。”。" not in text
    assert "“LANG=en_US.UTF8”下的" in text and '就像"/etc/passwd"。' in text


def test_quotes_are_placed_by_the_characters_read_beside_their_ticks():
    # 選單“動作”來取消, 50 px cells: “ ticks at the foot of the third cell, ” at the head of the sixth
    ticks = [("“", 132, 148), ("”", 252, 268)]
    places = [25.0, 75.0, 175.0, 225.0, 325.0, 375.0, 425.0]
    assert quotes.place_quotes("選單動作來取消", places, ticks, 50.0) == "選單“動作”來取消"
    # a quote read (either way) is not read twice; ticks read as a comma are the quote
    assert quotes.place_quotes("選單動作”來取", [25.0, 75.0, 175.0, 225.0, 262.0, 325.0, 375.0], ticks, 50.0) == \
        "選單“動作”來取"
    assert quotes.place_quotes("選單，動作來取", [25.0, 75.0, 140.0, 175.0, 225.0, 325.0, 375.0], ticks, 50.0) == \
        "選單“動作”來取"
    # upright bars at a column's ends (ENDS_BARS) only confirm a mark read there (=yes= is "yes")
    ends = [(quotes.ENDS_BARS, 0, 21), (quotes.ENDS_BARS, 267, 289)]
    assert quotes.place_quotes("=yes=", [12.0, 90.0, 160.0, 220.0, 280.0], ends, 48.0) == '"yes"'
    assert quotes.place_quotes("單的形式", [24.0, 72.0, 120.0, 168.0], ends[:1], 48.0) == "單的形式"
    assert quotes.turn_as_ticks("按下“確定“鍵", "“”") == "按下“確定”鍵"
    assert quotes.turn_as_ticks("按下“確定鍵", "“”") == "按下“確定鍵"  # counts differ: left alone


def test_an_x_read_as_times_after_a_letter_is_an_x():
    assert columns.latin_kana("“aptitudewhyrege×”可以") == "“aptitudewhyregex”可以"
    assert columns.latin_kana("1024×768") == "1024×768"
