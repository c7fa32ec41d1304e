"""DOCX, EPUB and ODT: text shape, sections, exact offsets, bad files, and the way through index and uploads.

Every file is made here with the format's own library (python-docx, ebooklib, odfpy).
"""

from __future__ import annotations

import io
import random
import re
import struct
import zipfile
from pathlib import Path

import pytest

from citeqa.errors import DocumentError
from citeqa.ingest.archive import MAX_UNPACKED_BYTES, MAX_ZIP_ENTRIES, OLE_MAGIC
from citeqa.ingest.chunking import ChunkerSettings, chunk_document
from citeqa.ingest.documents import load_document, scan_corpus
from citeqa.ingest.formats import SUPPORTED_SUFFIXES

DOCX_TEXT = """Informe del faro

Capítulo 1: La obra

El faro de Punta Brava se construyó en 1887 con piedra de la cantera cercana.
Su luz se encendió el mismo año.

primera piedra
torre terminada
lente instalada

año | altura | alcance
1887 | 32 m | 20 millas
1920 | | 24 millas

Capítulo 2: La luz

Detalles

La lámpara de aceite fue sustituida por una eléctrica en 1954, y el alcance llegó a 24 millas."""


def make_docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.core_properties.title = "Informe del faro de Punta Brava"
    d.add_heading("Informe del faro", 0)
    d.add_heading("Capítulo 1: La obra", 1)
    p = d.add_paragraph("El faro de Punta Brava se construyó en 1887   con piedra de la cantera cercana.")
    p.add_run().add_break()
    p.add_run("Su luz se encendió\tel mismo año.")  # a tab, then blanks, become one space
    for item in ("primera piedra", "torre terminada"):
        d.add_paragraph(item, style="List Bullet")
    d.add_paragraph("lente instalada", style="List Number")
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["año", "altura", "alcance"], ["1887", "32 m", "20 millas"], ["1920", "", "24 millas"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_heading("Capítulo 2: La luz", 1)
    d.add_heading("Detalles", 2)
    d.add_paragraph("La lámpara de aceite fue sustituida por una eléctrica en 1954, y el alcance llegó a 24 millas.")
    d.add_paragraph("")  # empty paragraphs leave nothing behind
    d.save(str(path))
    return path


EPUB_CHAPTERS = [
    (
        "text/c1.xhtml",
        "Capítulo 1 — O farol",
        "<h1>O farol da Ilha Clara</h1><p>O farol da <b>Ilha Clara</b>\n   foi aceso em 1899<br/>pelo capitão do porto.</p>"
        "<ul><li>torre de pedra</li><li>lente de Fresnel<ul><li>primeira ordem</li></ul></li></ul>",
    ),
    (
        "text/c2.xhtml",
        None,  # not in the table of contents: its first heading names it
        "<section><h2>A luz</h2><div><p>A luz alcança 22 milhas náuticas.</p></div>"
        "<table><tr><th>ano</th><th>luz</th></tr><tr><td>1899</td><td>petróleo</td></tr></table></section>",
    ),
    ("text/empty.xhtml", "Imagens", "<p><img src='x.png' alt=''/></p>"),
]
EPUB_TEXT = """O farol da Ilha Clara

O farol da Ilha Clara foi aceso em 1899
pelo capitão do porto.

torre de pedra
lente de Fresnel
primeira ordem

A luz

A luz alcança 22 milhas náuticas.

ano | luz
1899 | petróleo"""


def make_epub(path: Path, chapters=EPUB_CHAPTERS, extra: dict[str, str] | None = None) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("ilha-clara")
    book.set_title("O farol da Ilha Clara")
    book.set_language("pt")
    items, toc = [], []
    for name, title, body in chapters:
        item = epub.EpubHtml(title=title or name, file_name=name, lang="pt")
        item.content = f"<html><body>{body}</body></html>"
        book.add_item(item)
        items.append(item)
        if title:
            toc.append(epub.Link(name, title, name))
    book.toc = toc
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    if extra:
        with zipfile.ZipFile(path, "a") as archive:
            for name, data in extra.items():
                archive.writestr(name, data)
    return path


ODT_TEXT = """The Windmill of Greyhill

Thomas Hale built the windmill in 1821.
It ground wheat until 1911.

sails
millstones

part | made of
sails | canvas

Repairs

Restoration

The sails were replaced in 1987 by the county."""


def make_odt(path: Path) -> Path:
    from odf import dc
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, LineBreak, List, ListItem, Note, NoteBody, NoteCitation, P, S, Span

    doc = OpenDocumentText()
    doc.meta.addElement(dc.Title(text="Greyhill"))
    doc.text.addElement(H(outlinelevel=1, text="The Windmill of Greyhill"))
    p = P(text="Thomas ")
    p.addElement(Span(text="Hale"))
    p.addElement(S(c=3))
    p.addText("built the windmill in 1821.")
    note = Note(noteclass="footnote")
    note.addElement(NoteCitation(text="1"))
    body = NoteBody()
    body.addElement(P(text="A footnote that is not body text."))
    note.addElement(body)
    p.addElement(note)
    p.addElement(LineBreak())
    p.addText("It ground wheat until 1911.")
    doc.text.addElement(p)
    lst = List()
    for word in ("sails", "millstones"):
        item = ListItem()
        item.addElement(P(text=word))
        lst.addElement(item)
    doc.text.addElement(lst)
    table = Table()
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for row in (["part", "made of"], ["sails", "canvas"]):
        tr = TableRow()
        for value in row:
            cell = TableCell()
            cell.addElement(P(text=value))
            tr.addElement(cell)
        table.addElement(tr)
    doc.text.addElement(table)
    doc.text.addElement(H(outlinelevel=1, text="Repairs"))
    doc.text.addElement(H(outlinelevel=2, text="Restoration"))
    doc.text.addElement(P(text="The sails were replaced in 1987 by the county."))
    doc.save(str(path))
    return path


def sections(doc) -> list[tuple[str, str]]:
    """(title, first line of the range) of every section."""
    return [(s.title, doc.text[s.start : s.end].split("\n")[0]) for s in doc.sections]


def test_formats_are_accepted_everywhere():
    assert {".docx", ".epub", ".odt"} <= set(SUPPORTED_SUFFIXES)


def test_docx_paragraphs_headings_lists_tables_and_sections(tmp_path: Path):
    doc = load_document(make_docx(tmp_path / "informe.docx"), "informe.docx")
    assert doc.text == DOCX_TEXT
    assert doc.kind == "docx" and doc.lang == "es" and doc.title == "Informe del faro de Punta Brava"
    assert sections(doc) == [
        ("Capítulo 1: La obra", "Capítulo 1: La obra"),
        ("Capítulo 2: La luz", "Capítulo 2: La luz"),
    ]
    assert doc.section_at(doc.text.index("1954")) == "Capítulo 2: La luz"
    assert doc.section_at(doc.text.index("20 millas")) == "Capítulo 1: La obra"
    assert doc.section_at(0) is None  # the title comes before the first chapter
    assert doc.pages == () and doc.page_at(10) is None


def test_docx_keeps_inserted_and_controlled_text_and_drops_deleted_text_and_toc(tmp_path: Path):
    import docx
    from docx.oxml import parse_xml

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    d = docx.Document()
    d.add_paragraph("Contents 1", style=d.styles.add_style("toc 1", 1))
    p = d.add_paragraph("The beacon was lit in ")
    p._p.append(parse_xml(f'<w:del {w} w:id="1" w:author="a"><w:r><w:delText>1898</w:delText></w:r></w:del>'))
    p._p.append(parse_xml(f'<w:ins {w} w:id="2" w:author="a"><w:r><w:t>1899</w:t></w:r></w:ins>'))
    d.element.body.insert(
        0,
        parse_xml(
            f'<w:sdt {w}><w:sdtContent><w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Cover</w:t></w:r></w:p>'
            "</w:sdtContent></w:sdt>"
        ),
    )
    d.save(str(tmp_path / "edits.docx"))
    doc = load_document(tmp_path / "edits.docx", "edits.docx")
    assert doc.text == "Cover\n\nThe beacon was lit in 1899"
    assert sections(doc) == [("Cover", "Cover")]  # a Heading 2 level is the top when there is no Heading 1


def test_epub_chapters_in_reading_order_are_sections(tmp_path: Path):
    doc = load_document(make_epub(tmp_path / "farol.epub"), "farol.epub")
    assert doc.text == EPUB_TEXT  # the navigation page is not text, the chapter without text adds nothing
    assert doc.kind == "epub" and doc.lang == "pt" and doc.title == "O farol da Ilha Clara"
    assert sections(doc) == [("Capítulo 1 — O farol", "O farol da Ilha Clara"), ("A luz", "A luz")]
    assert doc.section_at(doc.text.index("petróleo")) == "A luz"


def test_odt_paragraphs_headings_lists_tables_and_sections(tmp_path: Path):
    doc = load_document(make_odt(tmp_path / "mill.odt"), "mill.odt")
    assert doc.text == ODT_TEXT  # spaces collapsed, the footnote left out, the line break kept
    assert doc.kind == "odt" and doc.lang == "en" and doc.title == "Greyhill"
    assert sections(doc) == [("The Windmill of Greyhill", "The Windmill of Greyhill"), ("Repairs", "Repairs")]


@pytest.mark.parametrize("make,name", [(make_docx, "a.docx"), (make_epub, "a.epub"), (make_odt, "a.odt")])
def test_offsets_are_exact_and_headings_stay_apart_through_chunking(tmp_path: Path, make, name):
    doc = load_document(make(tmp_path / name), name)
    chunks = chunk_document(doc, ChunkerSettings(size=60, overlap=10))
    assert chunks and all(doc.text[c.start : c.end] == c.text for c in chunks)
    headings = [s.title for s in doc.sections] if name != "a.epub" else ["A luz"]
    for heading in headings:  # a paragraph of its own, never cut inside by a passage boundary
        at = doc.text.index(heading)
        assert doc.text[at - 2 : at] in ("\n\n", "") and doc.text[at + len(heading) :].startswith("\n\n")
        assert any(heading in c.text.split("\n") for c in chunks), heading
        assert not any(at < c.start < at + len(heading) or at < c.end < at + len(heading) for c in chunks)


def _entry_with_declared_size(raw: bytes, name: str, size: int) -> bytes:
    """``raw`` with the central directory claiming ``size`` unpacked bytes for entry ``name``."""
    data = bytearray(raw)
    at = struct.unpack_from("<I", data, data.rindex(b"PK\x05\x06") + 16)[0]  # where the directory starts
    while data[at : at + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, at + 28)
        if data[at + 46 : at + 46 + name_len] == name.encode():
            struct.pack_into("<I", data, at + 24, size)
            return bytes(data)
        at += 46 + name_len + extra_len + comment_len
    raise AssertionError(f"{name} not in the zip")


def _rezip(raw: bytes, replace: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, replace.get(info.filename, src.read(info.filename)))
    return out.getvalue()


ENCRYPTION_XML = (
    '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
    'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
    '<enc:EncryptionMethod Algorithm="{}"/><enc:CipherData>'
    '<enc:CipherReference URI="EPUB/text/c1.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>'
)


#: "Billion laughs": ten levels of entities, each ten of the one below (10^10 characters if expanded).
LAUGHS = (
    '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
    + "".join(f'<!ENTITY {chr(98 + i)} "{f"&{chr(97 + i)};" * 10}">' for i in range(9))
    + "]>"
)


def _with_laughs(raw: bytes, part: str, word: str) -> bytes:
    """``raw`` with the billion-laughs DTD in ``part`` and its top entity used next to ``word``."""
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        xml = archive.read(part).decode()
    end = xml.index("?>") + 2
    xml = xml[:end] + LAUGHS + xml[end:].replace(word, f"{word} &j;", 1)
    return _rezip(raw, {part: xml.encode()})


def bad_files(folder: Path) -> dict[str, str]:
    """Every kind of bad DOCX, EPUB and ODT; returns name -> the reason expected."""
    import docx

    good_docx = make_docx(folder / "good.docx").read_bytes()
    (folder / "good.docx").unlink()
    (folder / "corrupt.docx").write_bytes(b"PK\x03\x04" + random.Random(2).randbytes(2000))
    (folder / "truncated.docx").write_bytes(good_docx[: len(good_docx) // 2])
    (folder / "encrypted.docx").write_bytes(OLE_MAGIC + b"\x00" * 1024)  # what Word writes for a password
    with zipfile.ZipFile(folder / "other.docx", "w") as archive:
        archive.writestr("notes.txt", "a zip, but not a Word document")
    docx.Document().save(str(folder / "blank.docx"))
    (folder / "laughs.docx").write_bytes(_with_laughs(good_docx, "word/document.xml", "Informe del faro"))
    (folder / "bomb.docx").write_bytes(_entry_with_declared_size(good_docx, "word/document.xml", 2**31))
    (folder / "lying.docx").write_bytes(_entry_with_declared_size(good_docx, "word/document.xml", 100))
    with zipfile.ZipFile(folder / "crowded.docx", "w") as archive:
        for n in range(MAX_ZIP_ENTRIES + 1):
            archive.writestr(f"f{n}", b"")
    make_epub(
        folder / "drm.epub",
        extra={"META-INF/encryption.xml": ENCRYPTION_XML.format("http://www.w3.org/2001/04/xmlenc#aes128-cbc")},
    )
    make_epub(folder / "adobe.epub", extra={"META-INF/rights.xml": "<rights/>"})
    make_epub(folder / "pictures.epub", chapters=[("p.xhtml", "Fotos", "<p><img src='a.png'/></p>")])
    (folder / "broken.epub").write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip: no container.xml
    nested = "<html><body>" + "<div>" * 5000 + "deep" + "</div>" * 5000 + "</body></html>"
    good_epub = make_epub(folder / "deep.epub").read_bytes()
    (folder / "deep.epub").write_bytes(_rezip(good_epub, {"EPUB/text/c1.xhtml": nested.encode()}))
    good_odt = make_odt(folder / "good.odt").read_bytes()
    (folder / "good.odt").unlink()
    with zipfile.ZipFile(io.BytesIO(good_odt)) as archive:
        manifest = archive.read("META-INF/manifest.xml").decode()
    locked = re.sub(
        r'(<manifest:file-entry[^>]*manifest:full-path="content.xml"[^>]*)/>',
        r'\1><manifest:encryption-data manifest:checksum-type="SHA1" manifest:checksum="x"/>'
        "</manifest:file-entry>",
        manifest,
    )
    assert locked != manifest
    (folder / "locked.odt").write_bytes(
        _rezip(good_odt, {"META-INF/manifest.xml": locked.encode(), "content.xml": random.Random(3).randbytes(500)})
    )
    (folder / "laughs.odt").write_bytes(_with_laughs(good_odt, "content.xml", "Thomas"))
    (folder / "garbled.odt").write_bytes(_rezip(good_odt, {"content.xml": b"<office:document-content"}))
    return {
        "corrupt.docx": "unreadable DOCX (BadZipFile)",
        "truncated.docx": "unreadable DOCX (BadZipFile)",
        "encrypted.docx": "encrypted or not a DOCX file",
        "other.docx": "unreadable DOCX (KeyError)",
        "blank.docx": "no text found",
        "laughs.docx": "unreadable DOCX (XMLSyntaxError)",  # lxml refuses to expand the entities
        "bomb.docx": f"too large when unpacked (2048 MB > {MAX_UNPACKED_BYTES // 1_048_576} MB)",
        "lying.docx": "unreadable DOCX (BadZipFile)",  # a stream longer than declared fails its CRC
        "crowded.docx": f"too many files inside ({MAX_ZIP_ENTRIES + 1} > {MAX_ZIP_ENTRIES})",
        "drm.epub": "encrypted EPUB (DRM)",
        "adobe.epub": "encrypted EPUB (DRM)",
        "pictures.epub": "no text found",
        "broken.epub": "unreadable EPUB (KeyError)",  # no META-INF/container.xml
        "deep.epub": "unreadable EPUB (RecursionError)",  # 5000 nested elements
        "locked.odt": "encrypted ODT (password-protected)",
        "garbled.odt": "unreadable ODT (XMLSyntaxError)",
        "laughs.odt": "unreadable ODT (XMLSyntaxError)",
    }


def test_bad_docx_epub_odt_are_skipped_with_a_reason(tmp_path: Path):
    expected = bad_files(tmp_path)
    scan = scan_corpus(tmp_path)
    assert scan.documents == ()
    assert {s.doc_id: s.reason for s in scan.skipped} == expected


def test_epub_with_only_obfuscated_fonts_is_read(tmp_path: Path):
    path = make_epub(
        tmp_path / "fonts.epub",
        extra={"META-INF/encryption.xml": ENCRYPTION_XML.format("http://www.idpf.org/2008/embedding")},
    )
    assert load_document(path, "fonts.epub").text == EPUB_TEXT


@pytest.mark.parametrize("make,name", [(make_docx, "f.docx"), (make_epub, "f.epub"), (make_odt, "f.odt")])
def test_fuzzed_files_are_read_or_skipped_never_raised(tmp_path: Path, make, name):
    """Random byte flips: every outcome is a document or a DocumentError with a known reason."""
    raw = make(tmp_path / name).read_bytes()
    rng = random.Random(0)
    reasons = set()
    for _ in range(150):
        data = bytearray(raw)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        (tmp_path / name).write_bytes(bytes(data))
        try:
            doc = load_document(tmp_path / name, name)
        except DocumentError as exc:
            reasons.add(str(exc).split(" (")[0])
        else:
            assert all(s.start < s.end <= len(doc.text) for s in doc.sections)
    assert reasons <= {
        "unreadable DOCX",
        "unreadable EPUB",
        "unreadable ODT",
        "no text found",
        "encrypted EPUB",
        "encrypted ODT",
        "too large when unpacked",
        "too many files inside",
    }


def test_cli_indexes_one_of_each_and_cites_the_docx_section(
    keyword_cli, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("COLUMNS", "200")  # citation lines unwrapped
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    make_docx(corpus / "informe.docx")
    make_epub(corpus / "farol.epub")
    make_odt(corpus / "mill.odt")
    (corpus / "encrypted.docx").write_bytes(OLE_MAGIC + b"\x00" * 1024)
    index = tmp_path / "index"
    assert keyword_cli(["index", "--corpus", str(corpus), "--index", str(index)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("indexed 3 documents") and out[1].startswith("languages: ")
    assert out[2:] == ["skipped encrypted.docx: encrypted or not a DOCX file"]
    assert (
        keyword_cli(["ask", "--index", str(index), "¿En qué año sustituyeron la lámpara de aceite por una eléctrica?"])
        == 0
    )
    out = capsys.readouterr().out
    assert "1954" in out.splitlines()[0]
    assert re.search(
        r"\[1\] Informe del faro de Punta Brava\s+\(informe\.docx, es, chars \d+-\d+, "
        r"sección: Capítulo 2: La luz, puntuación",  # the terminal speaks the question's language
        out,
    ), out
    assert keyword_cli(["ask", "--index", str(index), "--json", "When did Thomas Hale build the windmill?"]) == 0
    import json

    record = json.loads(capsys.readouterr().out)
    first = record["citations"][0]  # the answer itself depends on the scorer's confidence on a toy corpus
    assert first["doc_id"] == "mill.odt" and "1821" in first["text"]


def test_docx_upload_is_added_and_indexed(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    from citeqa.corpus.add import add_files
    from citeqa.embedding.keyword import KeywordEmbedder
    from citeqa.engine import Engine

    upload = make_docx(tmp_path / "upload-tmp.docx")
    broken = tmp_path / "broken-tmp.docx"
    broken.write_bytes(OLE_MAGIC + b"\x00" * 64)
    result = add_files(
        [(upload, "Informe faro.docx"), (broken, "locked.docx")], fixture_corpus, built_index, KeywordEmbedder()
    )
    assert result.indexed and result.added == ["Informe faro.docx"]
    assert result.refused == [("locked.docx", "locked.docx: encrypted or not a DOCX file")]
    engine = Engine.open(built_index, embedder=KeywordEmbedder())
    doc = engine.documents["Informe faro.docx"]
    assert doc.kind == "docx" and doc.section_at(doc.text.index("1954")) == "Capítulo 2: La luz"


def test_markdown_headings_become_sections_and_the_text_stays_as_written():
    from citeqa.ingest.readers import read_markdown

    text = "# The Lisbon tram 28\n\nIntro.\n\n## Fleet\n\nRemodelado cars.\n\n```\n## not a heading\n```\n\n## Route\n\nMartim Moniz.\n"
    found = read_markdown(text.encode())
    assert found.text == text and found.title == "The Lisbon tram 28"
    assert [(s.title, text[s.start : s.end]) for s in found.sections] == [
        ("Fleet", "## Fleet\n\nRemodelado cars.\n\n```\n## not a heading\n```"),
        ("Route", "## Route\n\nMartim Moniz."),
    ]
    flat = read_markdown(b"# One\n\nA.\n\n# Two\n\nB.")
    assert [s.title for s in flat.sections] == ["One", "Two"] and flat.title == ""
    assert read_markdown(b"No headings at all.").sections == ()
