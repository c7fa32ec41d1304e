"""docs/benchmarks.md's generated tables equal what bench/docs.py renders from bench/results/."""

from __future__ import annotations

import json


def test_benchmark_tables_are_rendered_from_the_results_files(load_script) -> None:
    docs = load_script("bench/docs.py")
    text = docs.DOC.read_text(encoding="utf-8")
    assert docs.BLOCK.search(text), "no generated block in docs/benchmarks.md"
    assert docs.render(text) == text


def test_a_changed_result_changes_the_table(load_script, tmp_path, monkeypatch) -> None:
    docs = load_script("bench/docs.py")
    for results in docs.RESULTS.glob("*.json"):  # every block needs its file
        (tmp_path / results.name).write_text(results.read_text(encoding="utf-8"), encoding="utf-8")
    data = json.loads((docs.RESULTS / "reader.json").read_text(encoding="utf-8"))
    data["warm_reader_on"]["p95_ms"] = 999.9  # whatever the last run measured
    (tmp_path / "reader.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(docs, "RESULTS", tmp_path)
    assert "999.9 ms" in docs.render(docs.DOC.read_text(encoding="utf-8"))


def test_the_bounds_and_memory_tables_come_from_their_runs(load_script) -> None:
    import json

    docs = load_script("bench/docs.py")
    bounds = json.loads((docs.RESULTS / "bounds.json").read_text(encoding="utf-8"))
    memory = json.loads((docs.RESULTS / "memory.json").read_text(encoding="utf-8"))
    assert f"**{bounds['summary']['behind_over_alone']:.2f}x**" in docs.bounds_table(bounds)
    peak = memory["server"]["phases"][-1]["VmHWM"]
    assert f"{peak:,.0f} MB |" in docs.memory_table(memory)
