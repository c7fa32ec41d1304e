"""What a record cites: one helper for the chat, the downloads and `citeqa ask/check --format markdown`."""

from __future__ import annotations

from citeqa.app.cited import citations_of, document_infos


def test_an_answer_and_a_check_name_their_cited_documents(holder):
    engine = holder.engine
    answer = engine.ask("When was the windmill of Greyhill built?", k=3)
    check = engine.check("The windmill of Greyhill was built in 1760.", k=2)
    assert citations_of(answer) == list(answer.citations)
    assert citations_of(check) == [e.citation for e in check.evidence]
    infos = document_infos(engine, [answer, check])
    cited = {c.doc_id for c in answer.citations} | {e.citation.doc_id for e in check.evidence}
    assert set(infos) == cited and "mill.html" in infos
    assert all(info.doc_id == doc_id and info.indexed_at for doc_id, info in infos.items())
    assert document_infos(engine, []) == {}
