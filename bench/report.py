"""Tables (rich, Markdown) and the plot for bench/run.py results.

``python bench/report.py out/bench/results.json [MORE.json ...] [--markdown] [--plot docs/bench.png]``
re-renders finished runs without measuring anything again; with several files, a size
measured in a later file replaces the same size from an earlier one (each row is marked
with the file it came from in --markdown).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _get(d: dict, *path, default=None):
    for key in path:
        if not isinstance(d, dict) or key not in d or d[key] is None:
            return default
        d = d[key]
    return d


def _f(value, fmt: str = "{:.1f}") -> str:
    return "–" if value is None else fmt.format(value)


def size_label(s: dict) -> str:
    chunks = _get(s, "index", "chunks")
    label = f"{s['size']} ({chunks:,} chunks)" if chunks else str(s["size"])
    return label + (f" [{Path(s['source']).parent.name}]" if s.get("source") else "")


def rows(report: dict) -> dict[str, list[list[str]]]:
    """Four tables: overview, warm stages (p50 ms), peer + FAISS, HNSW efSearch sweep."""
    overview, stages, peer, ann = [], [], [], []
    for s in report["sizes"]:
        ix, q, p = s.get("index", {}), s.get("query", {}), s.get("peer", {})
        measured = _f(_get(ix, "chunks_per_s"), "{:.1f}")
        if "projected_chunks_per_s" in ix:
            measured += f" (unique: {_f(ix['projected_chunks_per_s'])})"
        build = _f(_get(ix, "seconds"), "{:.0f}")
        if "projected_unique_s" in ix:
            build += f" (unique: {_f(ix['projected_unique_s'], '{:.0f}')})"
        overview.append(
            [
                size_label(s),
                _get(ix, "ann", default="–"),
                build,
                measured,
                _f(_get(ix, "disk_mb")),
                _f(_get(q, "latency_ms", "p50")),
                _f(_get(q, "latency_ms", "p95")),
                _f(_get(s, "cold_ask", "best_s")),
                _f(_get(s, "cold_serve", "first_answer_s")),
                _f(_get(q, "maxrss_mb"), "{:.0f}"),
                _f(_get(s, "cold_serve", "vm_hwm_mb"), "{:.0f}"),
                _f(_get(ix, "maxrss_mb"), "{:.0f}"),
            ]
        )
        st = _get(q, "stages_ms", default={})
        stages.append(
            [size_label(s)]
            + [_f(_get(st, name, "p50"), "{:.2f}") for name in STAGES]
            + [_f(_get(q, "latency_ms", "p50"), "{:.1f}")]
        )
        ratio = None
        if _get(p, "latency_ms", "p50") and _get(q, "latency_ms", "p50"):
            ratio = p["latency_ms"]["p50"] / q["latency_ms"]["p50"]
        peer.append(
            [
                size_label(s),
                _f(_get(p, "latency_ms", "p50")),
                _f(_get(p, "latency_ms", "p95")),
                _f(ratio, "{:.2f}×"),
                _f(_get(p, "maxrss_mb"), "{:.0f}"),
                _hit(q, p),
                _recall(q),
                _f(_get(q, "faiss", "flat_ms_p50"), "{:.2f}"),
                _f(_get(q, "faiss", "hnsw_ms_p50"), "{:.2f}"),
            ]
        )
        for ef, m in sorted(_get(q, "faiss", "ef_sweep", default={}).items(), key=lambda kv: int(kv[0])):
            ann.append(
                [
                    size_label(s),
                    f"M={q['faiss']['M']}, efC={q['faiss']['ef_construction']}",
                    str(ef),
                    _f(m["recall_at_10_ids"], "{:.3f}"),
                    _f(m["ms_p50"], "{:.3f}"),
                    _f(m["ms_p95"], "{:.3f}"),
                    _f(_get(q, "faiss", "flat_ms_p50"), "{:.2f}"),
                ]
            )
    return {"overview": overview, "stages": stages, "peer": peer, "ann": ann}


def _recall(q: dict) -> str:
    """Id-level recall@10 at citeqa's efSearch (older runs: the tie-aware figure)."""
    ef = _get(q, "faiss", "ef_search")
    if ef is None:
        return _f(_get(q, "faiss", "recall_at_10"), "{:.3f}")
    return f"{_f(_get(q, 'faiss', 'recall_at_10_ids'), '{:.3f}')} (efSearch {ef})"


def _hit(q: dict, p: dict) -> str:
    a = _get(q, "hit1", "answer_citations")
    r = _get(q, "hit1", "retrieval")
    h = _get(p, "hit1", "retrieval")
    if a is None and h is None:
        return "–"
    return f"{_f(a, '{:.3f}')} / {_f(r, '{:.3f}')} / {_f(h, '{:.3f}')}"


STAGES = ["language", "query", "encode", "dense", "lexical", "fusion", "candidates", "choose", "answer", "other"]
HEADERS = {
    "overview": [
        "size",
        "ANN",
        "index build s",
        "index chunks/s",
        "index MB",
        "warm p50 ms",
        "warm p95 ms",
        "cold `ask` s",
        "cold `serve` → 1st answer s",
        "query RSS MB",
        "serve RSS MB",
        "index RSS MB",
    ],
    "stages": ["size"] + [f"{n} p50" for n in STAGES] + ["total p50"],
    "peer": [
        "size",
        "Haystack p50 ms",
        "Haystack p95 ms",
        "Haystack/citeqa p50",
        "Haystack RSS MB",
        "hit@1 citeqa answer / citeqa retrieval / Haystack",
        "HNSW recall@10",
        "flat ms/query",
        "HNSW ms/query",
    ],
    "ann": ["size", "HNSW graph", "efSearch", "recall@10 (ids)", "HNSW ms p50", "HNSW ms p95", "flat ms p50"],
}
TITLES = {
    "overview": "citeqa: indexing, warm latency, cold start, memory",
    "stages": "citeqa warm latency by stage (ms, p50 over questions)",
    "peer": "peer (Haystack hybrid, retrieval only) and FAISS HNSW vs exact",
    "ann": "FAISS HNSW against exact search, by efSearch (same graph, one query at a time)",
}


def print_tables(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for name, body in rows(report).items():
        if not body:
            continue
        table = Table(title=TITLES[name])
        for h in HEADERS[name]:
            table.add_column(h.replace("`", ""))
        for r in body:
            table.add_row(*r)
        console.print(table)


def markdown(report: dict) -> str:
    out = []
    for name, body in rows(report).items():
        if not body:
            continue
        out.append(f"**{TITLES[name]}**\n")
        out.append("| " + " | ".join(HEADERS[name]) + " |")
        out.append("|" + "---|" * len(HEADERS[name]))
        out.extend("| " + " | ".join(r) + " |" for r in body)
        out.append("")
    return "\n".join(out)


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [s for s in report["sizes"] if _get(s, "index", "chunks") and _get(s, "query", "latency_ms")]
    if not sizes:
        return
    x = [s["index"]["chunks"] for s in sizes]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.plot(x, [s["query"]["latency_ms"]["p50"] for s in sizes], "o-", label="citeqa ask p50")
    a.plot(x, [s["query"]["latency_ms"]["p95"] for s in sizes], "o--", label="citeqa ask p95")
    px = [(s["index"]["chunks"], _get(s, "peer", "latency_ms", "p50")) for s in sizes]
    px = [(c, v) for c, v in px if v is not None]
    if px:
        a.plot(*zip(*px), "s-", label="Haystack hybrid retrieval p50")
    a.set(
        xscale="log",
        yscale="log",
        xlabel="chunks in index",
        ylabel="warm latency (ms)",
        title="Warm latency per question",
    )
    a.grid(True, which="both", alpha=0.3)
    a.legend()
    for label, key in (
        ("query process", ("query", "maxrss_mb")),
        ("serve process", ("cold_serve", "vm_hwm_mb")),
        ("index build", ("index", "maxrss_mb")),
        ("index on disk", ("index", "disk_mb")),
    ):
        pts = [(s["index"]["chunks"], _get(s, *key)) for s in sizes]
        pts = [(c, v) for c, v in pts if v is not None]
        if pts:
            b.plot(*zip(*pts), "o-", label=label)
    b.set(xscale="log", xlabel="chunks in index", ylabel="MB", title="Peak RSS and index size")
    b.grid(True, which="both", alpha=0.3)
    b.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def merge(reports: list[dict], paths: list[Path]) -> dict:
    """One report whose sizes come from the last file that measured them, in size order."""
    if len(reports) == 1:
        return reports[0]
    by_size: dict[str, dict] = {}
    for report, path in zip(reports, paths):
        for s in report["sizes"]:
            by_size[s["size"]] = {**s, "source": str(path)}
    order = sorted(by_size, key=lambda k: -1 if k == "real" else int(k))
    return {**reports[0], "sizes": [by_size[k] for k in order]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="re-render bench results")
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args(argv)
    report = merge([json.loads(p.read_text(encoding="utf-8")) for p in args.results], args.results)
    if args.markdown:
        sys.stdout.write(markdown(report))
    else:
        print_tables(report)
    if args.plot:
        plot(report, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
