"""The Corpus tab's table and skipped list (citeqa.app.web.corpus.view)."""

from citeqa.app.web.corpus.view import corpus_rows, skipped_html
from citeqa.index.manifest import DocEntry


def test_corpus_rows_and_skipped_list_are_plain_text():
    entry = DocEntry("x.md", "0" * 64, "<img src=x>\ntitle", "en", "md", ("a", "b"), "2026-01-01T00:00:00+00:00")
    assert corpus_rows([entry]) == [["<img src=x> title", "en", 2, "2026-01-01 00:00 UTC", "x.md"]]
    html = skipped_html([("<i>.exe", "unsupported type .exe")])
    assert "<i>" not in html and "unsupported type .exe" in html
    assert skipped_html([]) == ""
