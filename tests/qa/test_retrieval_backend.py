"""Answering depends only on the RetrievalBackend protocol, which IndexData implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.index.store import IndexData, load_index
from citeqa.qa.backend import RetrievalBackend
from citeqa.qa.pipeline import AnswerPipeline
from citeqa.text.analysis import query_terms

QUESTIONS = [
    "¿En qué año se construyó el faro de Punta Brava?",
    "Quando foi inaugurado o farol da Ilha Clara?",
    "When was the windmill of Greyhill restored?",
    "How many people climb the windmill every year?",
]


class OnlyTheProtocol:
    """A backend with the protocol's members and nothing else (no FAISS, BM25 or manifest in sight);
    its passages and documents can be read by row and by id, not whole (a remote backend's are)."""

    def __init__(self, data: IndexData) -> None:
        self.chunks, self.documents, self.spans = ByRow(data.chunks), ById(data.documents), data.spans
        self.dense_search, self.lexical_search = data.dense_search, data.lexical_search
        self.lexical_idf, self.majority_lang = data.lexical_idf, data.majority_lang
        self.passage_langs, self.document_langs = data.passage_langs, data.document_langs
        self.passages = data.passages
        self.model = data.model


class ByRow(Sequence):
    def __init__(self, items) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, row):
        assert isinstance(row, int), "answering reads passages by row"
        return self.items[row]

    def __iter__(self):
        raise AssertionError("answering reads every passage")


class ById(Mapping):
    def __init__(self, items) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, doc_id):
        return self.items[doc_id]

    def __iter__(self):
        raise AssertionError("answering reads every document")


def test_index_data_is_a_retrieval_backend(shared_index: Path):
    data: RetrievalBackend = load_index(shared_index)
    found = data.lexical_search(query_terms("faro de Punta Brava", ("es",)), 2)
    assert len(found) == 1 and data.chunks[next(iter(found))].doc_id == "faro.txt" and min(found.values()) > 0
    assert data.lexical_search(["\x00nothing"], 5) == {}


def test_answers_need_nothing_but_the_protocol(shared_index: Path):
    data = load_index(shared_index)
    embedder = KeywordEmbedder()
    direct, behind = AnswerPipeline(data, embedder.encode), AnswerPipeline(OnlyTheProtocol(data), embedder.encode)
    for question in QUESTIONS:
        a, b = direct.run(question).answer.to_dict(), behind.run(question).answer.to_dict()
        a.pop("latency_ms"), b.pop("latency_ms")
        assert a == b
