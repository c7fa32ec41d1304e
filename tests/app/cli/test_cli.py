import json
from pathlib import Path

from citeqa.app.cli import commands as cli


def test_index_then_ask_json(keyword_cli, fixture_corpus: Path, tmp_path: Path, capsys):
    index = tmp_path / "idx"
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", str(index)]) == 0
    assert "indexed 3 documents" in capsys.readouterr().out
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", str(index)]) == 0
    assert "up to date" in capsys.readouterr().out
    assert keyword_cli(["ask", "--index", str(index), "--json", "¿Cuánto cuesta la entrada al museo del faro?"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["language"] == "es" and record["citations"][0]["doc_id"] == "faro.txt"


def test_ask_prints_answer_and_numbered_citations(keyword_cli, built_index: Path, capsys):
    assert keyword_cli(["ask", "--index", str(built_index), "When was the windmill built?", "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert "[1] The Windmill of Greyhill" in out and "[2]" in out and "1760" in out


def test_errors_are_one_line_and_non_zero(tmp_path: Path, capsys):
    assert cli.main(["ask", "--index", str(tmp_path / "none"), "hola"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("citeqa: error:") and "citeqa index" in err and "\n" not in err


def test_skipped_files_are_listed(keyword_cli, fixture_corpus: Path, tmp_path: Path, capsys):
    (fixture_corpus / "empty.txt").write_bytes(b"")
    assert keyword_cli(["index", "--corpus", str(fixture_corpus), "--index", str(tmp_path / "i")]) == 0
    assert "skipped empty.txt: empty file" in capsys.readouterr().out


def test_main_filters_only_the_onnx_quantisers_root_logger_noise():
    import logging

    from citeqa.app.cli import commands as cli

    noise = cli._QuantizerNoise()

    def record(path: str) -> logging.LogRecord:
        return logging.LogRecord("root", logging.WARNING, path, 1, "a warning", None, None)

    assert not noise.filter(record("/venv/site-packages/onnxruntime/quantization/quantize.py"))
    assert noise.filter(record("/venv/site-packages/pypdf/_reader.py"))


def test_the_cli_caps_malloc_arenas_unless_the_user_chose(monkeypatch):
    """glibc takes the cap (mallopt answers 1) when the environment names none; a user's own
    ``MALLOC_ARENA_MAX``, which glibc read at the process's start, is left to stand."""
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert cli.limit_malloc_arenas(8) is True  # 8: a cap this test process can live with
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert cli.limit_malloc_arenas(8) is False
