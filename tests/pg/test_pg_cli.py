"""``citeqa index/ask/check --backend postgresql://...`` on two real nodes, and the engine over them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder

pytestmark = pytest.mark.postgres

QUESTION = "¿En qué año se construyó el faro de Punta Brava?"


def record(keyword_cli, capsys, argv: list[str]) -> dict:
    assert keyword_cli(argv) == 0
    data = json.loads(capsys.readouterr().out)
    data.pop("latency_ms")
    return data


def test_index_publishes_and_ask_answers_as_the_local_index(
    keyword_cli, capsys, fixture_corpus: Path, tmp_path: Path, pg_spec: str
):
    index = str(tmp_path / "index")
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", index, "--backend", pg_spec]) == 0
    assert "published generation 1 to 2 postgres shards: 3 passages, exact search" in capsys.readouterr().out
    local = record(keyword_cli, capsys, ["ask", "--index", index, "--json", QUESTION])
    remote = record(keyword_cli, capsys, ["ask", "--index", "nowhere", "--backend", pg_spec, "--json", QUESTION])
    assert remote == local and local["citations"]
    assert keyword_cli(["check", "--backend", pg_spec, "El faro de Punta Brava se construyó en 1887."]) == 0
    capsys.readouterr()
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", index, "--backend", pg_spec]) == 0
    assert "postgres index up to date: generation 1 on 2 shards" in capsys.readouterr().out


def test_a_killed_node_is_one_line_and_exit_2(
    keyword_cli, capsys, fixture_corpus: Path, tmp_path: Path, pg_spec: str, pg_cluster
):
    from citeqa.pg.nodes import start_node, stop_node

    index = str(tmp_path / "index")
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", index, "--backend", pg_spec]) == 0
    capsys.readouterr()
    before = record(keyword_cli, capsys, ["ask", "--backend", pg_spec, "--json", QUESTION])
    stop_node(pg_cluster[1], mode="immediate")
    try:
        assert keyword_cli(["ask", "--backend", pg_spec, QUESTION]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("citeqa: error: postgres shard 2 of 2 (127.0.0.1:")
    finally:
        start_node(pg_cluster[1])
    assert record(keyword_cli, capsys, ["ask", "--backend", pg_spec, "--json", QUESTION]) == before


def test_ann_needs_a_backend_and_a_bad_backend_is_one_line(keyword_cli, capsys, fixture_corpus: Path, tmp_path: Path):
    argv = ["index", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "index"), "--ann", "hnsw"]
    assert keyword_cli(argv) == 2
    assert "--ann needs --backend" in capsys.readouterr().err
    assert keyword_cli(["ask", "--backend", "mysql://nowhere/db", QUESTION]) == 2
    assert "postgresql://HOST:PORT/DB" in capsys.readouterr().err


def test_the_engine_over_postgres_reloads_to_the_new_generation(fixture_corpus: Path, tmp_path: Path, pg_spec: str):
    from citeqa.engine import Engine
    from citeqa.index.builder import update_index
    from citeqa.index.store import load_index
    from citeqa.pg.publish import publish

    update_index(fixture_corpus, tmp_path / "index", KeywordEmbedder())
    publish(load_index(tmp_path / "index"), pg_spec)
    engine = Engine.open(tmp_path / "unused", backend=pg_spec, embedder=KeywordEmbedder(), reader="off")
    assert engine.index_dir is None  # the server's uploads are off: documents go in with `citeqa index --backend`
    assert engine.ask(QUESTION).citations[0].doc_id == "faro.txt"
    (fixture_corpus / "extra.txt").write_text("The windmill of Greyhill has four sails.", encoding="utf-8")
    update_index(fixture_corpus, tmp_path / "index", KeywordEmbedder())
    publish(load_index(tmp_path / "index"), pg_spec)
    assert "extra.txt" not in engine.documents
    assert "extra.txt" in engine.reload().documents


def test_serve_answers_from_the_shards_without_uploads(
    keyword_cli, fixture_corpus: Path, tmp_path: Path, pg_spec: str, monkeypatch: pytest.MonkeyPatch
):
    """`citeqa serve --backend`: the whole path (CLI, engine over PostgreSQL, guard, uvicorn), uploads off."""
    from gradio_client import Client

    from citeqa.app.web import lifecycle, serving
    from citeqa.pg.nodes import free_port

    index = str(tmp_path / "index")
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", index, "--backend", pg_spec]) == 0
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    seen: dict = {}
    serve = lifecycle.serve

    def recorded(open_engine, **kwargs):  # the real lifecycle, its arguments kept
        seen.update(kwargs)
        return serve(open_engine, **kwargs)

    monkeypatch.setattr(lifecycle, "serve", recorded)

    def probe(app, sock) -> None:  # instead of serving until Ctrl+C
        running = serving.Running(app, sock, "127.0.0.1")
        try:
            record = Client(running.url, verbose=False).predict(QUESTION, [], 2, "auto", api_name="/ask")
            seen["answer"] = record["citations"][0]["doc_id"]
        finally:
            running.close()

    monkeypatch.setattr(serving, "run", probe)
    argv = ["serve", "--index", "nowhere", "--corpus", str(fixture_corpus), "--backend", pg_spec]
    assert keyword_cli([*argv, "--port", str(free_port())]) == 0
    assert seen["corpus_dir"] is None and seen["answer"] == "faro.txt"


def test_a_question_past_its_time_limit_is_one_line_and_exit_2(
    keyword_cli, capsys, fixture_corpus: Path, tmp_path: Path, pg_spec: str
):
    index = str(tmp_path / "index")
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", index, "--backend", pg_spec]) == 0
    capsys.readouterr()
    assert keyword_cli(["ask", "--backend", pg_spec, "--question-timeout", "0.000001", QUESTION]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("citeqa: error: the question ran past its 1e-06 s limit while postgres shard ")
    assert keyword_cli(["ask", "--backend", pg_spec, "--question-timeout", "20", "--json", QUESTION]) == 0
    assert json.loads(capsys.readouterr().out)["citations"]
    with pytest.raises(SystemExit) as refused:
        keyword_cli(["ask", "--backend", pg_spec, "--question-timeout", "0", QUESTION])
    assert refused.value.code == 2 and "must be a positive number of seconds" in capsys.readouterr().err
