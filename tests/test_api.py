"""The public API: the names ``from citeqa import ...`` offers, and the README's example runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import citeqa


def test_public_names_import_and_stay_lazy(repo: Path):
    for name in citeqa.__all__:
        assert getattr(citeqa, name) is not None
    with pytest.raises(AttributeError):
        citeqa.Pipeline  # noqa: B018 - no such name
    code = "import sys, citeqa; print([m for m in ('citeqa.engine', 'faiss', 'torch', 'gradio') if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(repo / "src")},
    )
    assert out.stdout.strip() == "[]"


def test_errors_share_one_base():
    from citeqa.errors import IndexMissingError, QuestionError

    assert issubclass(IndexMissingError, citeqa.CiteqaError) and issubclass(QuestionError, citeqa.CiteqaError)


def readme_example(repo: Path) -> str:
    """The Python block under the README's "Python API" heading."""
    text = (repo / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Python API") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_runs(
    repo: Path,
    fixture_corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    """The example, as written, over the fixture corpus (the keyword embedder stands in for the model)."""
    from citeqa.embedding.keyword import KeywordEmbedder

    monkeypatch.chdir(tmp_path)
    code = readme_example(repo)
    assert code.count("\n") <= 8 and "build_index" in code and "Engine.open" in code
    code = code.replace('build_index("corpus", "index")', 'build_index("corpus", "index", embedder=_embedder)')
    code = code.replace('Engine.open("index")', 'Engine.open("index", embedder=_embedder)')
    code = code.replace("¿Cuántos parámetros tiene GLM-5?", "¿En qué año se construyó el faro de Punta Brava?")
    exec(compile(code, "README.md", "exec"), {"_embedder": KeywordEmbedder()})
    out = capsys.readouterr().out
    assert "faro.txt" in out, out  # the question's fact sits in the fixture corpus's Spanish document


def test_all_lists_exactly_the_lazy_exports():
    assert set(citeqa.__all__) == {"__version__", *citeqa._EXPORTS}
