from pathlib import Path

import pytest

from citeqa.corpus.add import (
    MAX_NAME_BYTES,
    AddWatch,
    UploadRefusal,
    add_files,
    check_size,
    check_type,
    free_path,
    safe_label,
    safe_name,
    save_upload,
    summary,
    target_path,
)
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import IndexStoreError, UploadError
from citeqa.index.store import load_index


@pytest.mark.parametrize(
    "name,expected",
    [
        ("../../etc/passwd.txt", "passwd.txt"),
        ("/etc/passwd.md", "passwd.md"),
        ("C:\\Users\\me\\notes.TXT", "notes.txt"),
        (".hidden.txt", "hidden.txt"),
        ("informe año 2026.md", "informe año 2026.md"),
        ("a<b>|c?.html", "a_b_c.html"),
        ("x\x00y.txt", "xy.txt"),
        ("..\\..\\boot.ini", "boot.ini"),
        ("ｒｅｐｏｒｔ．ｔｘｔ", "report.txt"),  # fullwidth forms: the name the user typed, in plain letters
        ("ｒｅｐｏｒｔ.ＴＸＴ", "report.txt"),
        ("ｒｅｐｏｒｔ.txt", "report.txt"),
        ("ﬁnal ｖ２.md", "final v2.md"),
        ("a／b.txt", "a_b.txt"),  # a fullwidth solidus is no path separator
        ("e\u0301te\u0301.txt", "été.txt"),
    ],
)
def test_safe_name_keeps_only_a_plain_last_part(name, expected):
    assert safe_name(name) == expected
    assert safe_name(safe_name(name)) == safe_name(name)


@pytest.mark.parametrize(
    "name", ["", "..", "../..", "/", "...", "\x00", " . ", ".txt", "\U0001f600.txt", "．.txt", "\u200b.md"]
)
def test_safe_name_refuses_names_with_nothing_left(name):
    """A name whose part before the type has nothing usable left is refused as a name (it was
    ``txt: unsupported type (none)`` for ``😀.txt``: the type was taken for the name)."""
    with pytest.raises(UploadRefusal) as refused:
        safe_name(name)
    assert refused.value.reason.key == "name"


def test_safe_name_fits_the_file_system(tmp_path: Path):
    """120 characters of a CJK name are 360 bytes, past the 255 a file name may have: the name is cut
    to whole characters that fit with room for ``-2`` and the hidden partial copy's ``.…part``."""
    for name in ["報" * 200 + ".txt", "\U0001f600a" * 100 + ".markdown", "é" * 300 + ".epub"]:
        cut = safe_name(name)
        assert len(cut.encode()) <= MAX_NAME_BYTES and Path(cut).suffix == Path(name).suffix
        assert safe_name(cut) == cut
        path = free_path(tmp_path / cut)
        partial = path.with_name(f".{path.stem}-99{path.suffix}.part")
        partial.write_text("x")  # the longest name a save writes


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "..\\..\\x.txt", "sub/../../y.md"])
def test_target_never_leaves_the_corpus(tmp_path: Path, name):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    assert target_path(corpus, name).parent == corpus.resolve()


def test_target_refuses_a_symlink_that_points_outside(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "evil.txt").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(UploadError):
        target_path(corpus, "evil.txt")


def test_type_and_size_checks():
    assert check_type("a.PDF") == ".pdf" and check_type("b.DOCX") == ".docx"
    for bad in ("a.exe", "a", "a.txt.sh", "a.doc"):
        with pytest.raises(UploadError, match="unsupported type"):
            check_type(bad)
    check_size("a.txt", 10, max_bytes=10)
    with pytest.raises(UploadError, match="too large"):
        check_size("a.txt", 11 * 1_048_576, max_bytes=10 * 1_048_576)
    with pytest.raises(UploadError, match="empty"):
        check_size("a.txt", 0)


def test_free_path_and_labels(tmp_path: Path):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "a-2.txt").write_text("x")
    assert free_path(tmp_path / "a.txt").name == "a-3.txt"
    assert free_path(tmp_path / "b.txt").name == "b.txt"
    assert safe_label("../../x\n.txt") == "x.txt"


def _file(tmp_path: Path, name: str, data: bytes | str) -> Path:
    folder = tmp_path / "uploads"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_save_upload_validates_before_copying(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    good = _file(tmp_path, "note.txt", "The bridge of Alvor opened in 1931.")
    saved = save_upload(good, "../../note.txt", corpus)
    assert saved == corpus.resolve() / "note.txt" and saved.read_text() == good.read_text()
    assert save_upload(good, "note.txt", corpus) is None  # same bytes: nothing to do
    other = _file(tmp_path, "note2.txt", "Another text entirely.")
    assert save_upload(other, "note.txt", corpus).name == "note-2.txt"  # never overwrites
    for name, data, reason in [
        ("bin.txt", b"\x00\x01\x02" * 10, "binary"),
        ("e.md", b"", "empty"),
        ("broken.pdf", b"%PDF-1.4 not really", "PDF"),
        ("run.sh", "echo", "unsupported"),
        ("blank.html", "<html><script>x()</script></html>", "no text"),
    ]:
        with pytest.raises(UploadError, match=reason):
            save_upload(_file(tmp_path, name, data), name, corpus)
    with pytest.raises(UploadError, match="too large"):
        save_upload(good, "big.txt", corpus, max_bytes=10)
    assert sorted(p.name for p in corpus.iterdir()) == ["note-2.txt", "note.txt"]


def test_add_files_indexes_new_documents(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    before = load_index(built_index).manifest
    doc = _file(tmp_path, "bridge.md", "# The bridge of Alvor\n\nThe bridge of Alvor opened in 1931.")
    bad = _file(tmp_path, "tool.exe", "MZ")
    steps: list[tuple[float, int, str]] = []
    result = add_files(
        [(doc, "bridge.md"), (bad, "tool.exe")],
        fixture_corpus,
        built_index,
        KeywordEmbedder(),
        watch=AddWatch(report=lambda done, total, text: steps.append((done, total, text))),
    )
    assert result.indexed and result.added == ["bridge.md"] and result.refused[0][0] == "tool.exe"
    after = load_index(built_index).manifest
    assert {d.doc_id for d in after.documents} == {d.doc_id for d in before.documents} | {"bridge.md"}
    assert [text for _, _, text in steps[:2]] == ["checking bridge.md", "checking tool.exe"]
    assert "reading bridge.md" in [text for _, _, text in steps]  # each new file, read again to index
    done = [d for d, _, _ in steps]
    assert steps[-1] == (2, 2, "done") and done == sorted(done) and done[1] > done[0]  # the bar only moves on
    lines = summary(result)
    assert lines[0] == "added bridge.md" and "unsupported type .exe" in lines[1]


def test_one_odd_name_does_not_fail_the_add(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    """Issue [3/6] item 7: each file of an add is taken or refused on its own. A fullwidth name is
    added under its plain letters, a name with nothing usable is refused as a name, a CJK name too long
    for the file system is cut (it was `not saved (File name too long)`), and the others are added."""
    texts = {
        "ｒｅｐｏｒｔ．ｔｘｔ": "The report on the harbour of Sines was written in 1988.",
        "\U0001f600.txt": "The smiling lighthouse was painted in 1990.",
        "報" * 150 + ".txt": "The port of Leixões was dredged in 1932.",
        "quay.txt": "The quay of Porto Velho was paved in 1902.",
    }
    files = [(_file(tmp_path, f"upload-{i}.bin", text), name) for i, (name, text) in enumerate(texts.items())]
    result = add_files(files, fixture_corpus, built_index, KeywordEmbedder())
    long_name = safe_name("報" * 150 + ".txt")
    assert result.indexed and result.added == ["report.txt", long_name, "quay.txt"]
    assert [(label, reason.key) for label, reason in result.refused] == [("\U0001f600.txt", "name")]
    assert {"report.txt", long_name, "quay.txt"} <= {d.doc_id for d in load_index(built_index).manifest.documents}
    assert summary(result)[-1] == "refused unusable file name '\U0001f600.txt'"
    assert summary(result, "es")[-1] == "rechazado nombre de archivo no utilizable: '\U0001f600.txt'"


def test_refused_upload_leaves_corpus_and_index_untouched(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    files_before = sorted(p.name for p in fixture_corpus.rglob("*"))
    current = (built_index / "CURRENT").read_text()
    result = add_files(
        [(_file(tmp_path, "x.pdf", b"%PDF-garbage"), "x.pdf")], fixture_corpus, built_index, KeywordEmbedder()
    )
    assert not result.indexed and result.refused and not result.added
    assert sorted(p.name for p in fixture_corpus.rglob("*")) == files_before
    assert (built_index / "CURRENT").read_text() == current


def test_failed_indexing_removes_the_copied_file(fixture_corpus: Path, built_index: Path, tmp_path: Path):
    class Broken(KeywordEmbedder):
        def encode(self, texts, *, progress=False):
            raise IndexStoreError("disk full")

    current = (built_index / "CURRENT").read_text()
    doc = _file(tmp_path, "new.txt", "A brand new document about the harbour of Sines.")
    result = add_files([(doc, "new.txt")], fixture_corpus, built_index, Broken())
    assert result.error and "disk full" in result.error and not result.indexed and not result.added
    assert not (fixture_corpus / "new.txt").exists()
    assert (built_index / "CURRENT").read_text() == current


@pytest.mark.parametrize("stop_at", ["checking first.txt", "checking second.txt", "reading first.txt", "embedding"])
def test_a_cancelled_add_adds_nothing_and_keeps_the_index(
    fixture_corpus: Path, built_index: Path, tmp_path: Path, stop_at: str
):
    """Issue [1/7] item 4: cancelled at any step before the switch, an add leaves the corpus and the
    live index exactly as they were (the files it had already copied go again)."""
    files_before = sorted(p.name for p in fixture_corpus.rglob("*"))
    current = (built_index / "CURRENT").read_text()
    texts = {"first.txt": "The pier of Alvor was rebuilt in 1977.", "second.txt": "The tide mill of Sines."}
    pairs = [(_file(tmp_path, name, text), name) for name, text in texts.items()]
    seen: list[str] = []
    watch = AddWatch(report=lambda done, total, text: seen.append(text), cancelled=lambda: stop_at in " ".join(seen))
    result = add_files(pairs, fixture_corpus, built_index, KeywordEmbedder(), watch=watch)
    assert result.cancelled and not result.indexed and result.added == []
    assert sorted(p.name for p in fixture_corpus.rglob("*")) == files_before  # no copy, no journal, no .part
    assert (built_index / "CURRENT").read_text() == current
    again = add_files(pairs[:1], fixture_corpus, built_index, KeywordEmbedder())  # the next add works
    assert again.indexed and again.added == ["first.txt"]
