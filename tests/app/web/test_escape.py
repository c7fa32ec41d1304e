"""Text from documents and questions made inert before it reaches the page (citeqa.app.web.escape)."""

from citeqa.app.web.escape import safe

XSS = '<script>alert(1)</script> <img src=x onerror="alert(2)"> ![pic](http://evil/x.png) [link](javascript:alert(3))'
BAD = ("<script", "<img", "![", "](", 'onerror="', "javascript:")


def test_safe_neutralises_html_and_markdown():
    out = safe(XSS)
    for bad in BAD:
        assert bad not in out
