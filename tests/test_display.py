from citeqa.display import answer_html, safe, sources_html
from citeqa.models import Answer, Citation, Highlight

XSS = '<script>alert(1)</script> <img src=x onerror="alert(2)"> ![pic](http://evil/x.png) [link](javascript:alert(3))'


def test_safe_neutralises_html_and_markdown():
    out = safe(XSS)
    for bad in ("<script", "<img", "![", "](", "onerror=\"", "javascript:"):
        assert bad not in out


def test_answer_and_sources_escape_document_text():
    cit = Citation("x.html", XSS, "en", 0, len(XSS), XSS, 0.9)
    answer = Answer("q", "en", XSS, False, 0.9, (cit,), 1.0, Highlight(0, 8))
    for html in (answer_html(answer), sources_html(answer)):
        assert "<script" not in html and "<img" not in html and "![" not in html
        assert "<mark>" in html


def test_abstention_is_labelled_in_the_question_language():
    cit = Citation("a.txt", "T", "es", 0, 1, "x", 0.1)
    answer = Answer("q", "pt", None, True, 0.1, (cit,))
    assert "Não encontrei isso nos documentos." in answer_html(answer)
    html = sources_html(answer)
    assert "Passagens mais próximas" in html and "outro idioma" in html
