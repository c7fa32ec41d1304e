"""docs/benchmarks.md's generated tables equal what bench/docs.py renders from bench/results/."""

from __future__ import annotations


def test_benchmark_tables_are_rendered_from_the_results_files(load_script) -> None:
    docs = load_script("bench/docs.py")
    text = docs.DOC.read_text(encoding="utf-8")
    assert docs.BLOCK.search(text), "no generated block in docs/benchmarks.md"
    assert docs.render(text) == text


def test_a_changed_result_changes_the_table(load_script, tmp_path, monkeypatch) -> None:
    docs = load_script("bench/docs.py")
    data = (docs.RESULTS / "reader.json").read_text(encoding="utf-8").replace("237.2", "999.9")
    (tmp_path / "reader.json").write_text(data, encoding="utf-8")
    monkeypatch.setattr(docs, "RESULTS", tmp_path)
    assert "999.9 ms" in docs.render(docs.DOC.read_text(encoding="utf-8"))
