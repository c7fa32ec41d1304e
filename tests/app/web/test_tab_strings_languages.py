"""The last English of the interface, in each of its seven languages: the Corpus tab's refusals (an upload's
and a removal's), the Evaluate tab's charts (their texts read from the matplotlib figures before they are
saved) and its comparison table. Each is rendered in every interface language and must hold no piece of an
English catalogue string that the language translates, and the English CLI/API lines stay as they were."""

from __future__ import annotations

import json
import string
from functools import cache
from importlib import resources
from pathlib import Path

import pytest

from citeqa.corpus.add import (
    Reason,
    UploadRefusal,
    _document_refusal,
    add_files,
    check_size,
    check_type,
    safe_name,
    summary,
)
from citeqa.corpus.remove import corpus_file, remove_document
from citeqa.errors import DocumentError
from citeqa.ingest.budget import ParseBudget
from citeqa.messages import Said
from tests.evaluation.test_compare import new_run, old_run
from tests.evaluation.test_evaluation import _sample_results

LANGUAGES = ("ca", "de", "en", "es", "fr", "it", "pt")
OTHERS = tuple(lang for lang in LANGUAGES if lang != "en")


@cache
def _catalogue(lang: str) -> dict[str, dict[str, str]]:
    text = resources.files("citeqa.catalogue").joinpath(f"{lang}.json").read_text(encoding="utf-8")
    return json.loads(text)


def _pieces(text: str) -> list[str]:
    """The literal parts of a catalogue string around its placeholders, long enough to tell a language by."""
    parts = (literal.strip(" .,:;…()·\n") for literal, _, _, _ in string.Formatter().parse(text))
    return [part for part in parts if len(part) >= 6]


@cache
def english_only(lang: str, section: str, prefix: str = "") -> frozenset[str]:
    """Pieces of English's ``section`` strings (those of keys starting ``prefix``) that ``lang`` translates:
    in none of ``lang``'s strings of that section."""
    own = [v for k, v in _catalogue(lang)[section].items()]
    english = [v for k, v in _catalogue("en")[section].items() if k.startswith(prefix)]
    return frozenset(p for text in english for p in _pieces(text) if not any(p in mine for mine in own))


def english_in(text: str, lang: str, section: str, prefix: str = "") -> list[str]:
    return sorted(piece for piece in english_only(lang, section, prefix) if piece in text)


def test_every_language_translates_the_new_strings():
    """No new key of these kinds is left English in another language (beyond what is the same everywhere)."""
    same = {"chart_tick_hit1", "chart_tick_hit5", "chart_tick_mrr10"}  # names of metrics, the same everywhere
    french = {("fr", "chart_questions"), ("fr", "chart_score")}  # "questions", "score (0-1)": French words too
    for section, prefixes in (("corpus_status", ("why_",)), ("evaluate", ("chart_", "cmp_"))):
        keys = [k for k in _catalogue("en")[section] if k.startswith(prefixes) and k != "chart_alt"]
        assert len(keys) > 10
        for lang in OTHERS:
            untranslated = [
                k
                for k in keys
                if k not in same
                and (lang, k) not in french
                and _catalogue(lang)[section][k] == _catalogue("en")[section][k]
            ]
            assert untranslated == [], (lang, untranslated)


# --------------------------------------------------------------------------- Corpus tab


@pytest.fixture
def refused_add(tmp_path: Path):
    """An add of files the checks refuse, each for another reason: nothing is indexed (no embedder needed)."""
    files = tmp_path / "uploads"
    files.mkdir()
    made = {
        "tool.exe": b"MZ\x90\x00",
        "README": b"plain words",
        "empty.txt": b"",
        "blob.txt": b"abc\x00def\x00" * 40,
        "broken.pdf": b"%PDF-1.4 not really a pdf",
    }
    for name, data in made.items():
        (files / name).write_bytes(data)
    (files / "big.txt").write_bytes(b"word " * 400_000)
    pairs = [(files / name, name) for name in (*made, "big.txt")]
    return add_files(pairs, tmp_path / "corpus", tmp_path / "index", None, max_bytes=1_048_576)


def test_the_checks_keep_their_english_lines_for_the_cli_and_the_api(refused_add):
    reasons = dict(refused_add.refused)
    assert not refused_add.added and not refused_add.indexed and len(reasons) == 6
    assert reasons["tool.exe"].startswith("tool.exe: unsupported type .exe; accepted: ")
    assert reasons["README"].startswith("README: unsupported type (none); accepted: ")
    assert reasons["empty.txt"] == "empty.txt: the file is empty"
    assert reasons["big.txt"] == "big.txt: too large (1.9 MB; the limit is 1 MB)"
    assert reasons["blob.txt"] == "blob.txt: binary file (contains NUL bytes)"
    assert reasons["broken.pdf"].startswith("broken.pdf: unreadable PDF")
    assert all(isinstance(r, Reason) for r in reasons.values())
    assert [r.key for r in reasons.values()] == ["type", "no_type", "empty", "binary", "unreadable", "large"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_add_s_refusals_are_said_in_the_page_language(refused_add, lang):
    lines = summary(refused_add, lang)
    assert len(lines) == 6
    status = _catalogue(lang)["corpus_status"]
    for line, (name, reason) in zip(lines, refused_add.refused):
        assert name in line
        assert line.startswith(status["refused"].split("{")[0])
        shown = line.replace(reason.values.get("detail", "\0"), "")  # a reader's own detail stays as it was
        assert english_in(shown, lang, "corpus_status") == [], line
        if lang != "en" and reason.key != "unreadable":
            assert reason not in line, line
    if lang == "en":
        assert lines[2] == "refused empty.txt: the file is empty"


def _refusal(call) -> UploadRefusal:
    with pytest.raises(UploadRefusal) as refused:
        call()
    return refused.value


def _every_refusal(tmp_path: Path) -> list[Reason]:
    """One Reason of each kind the Corpus tab can show, as the checks, the reader budget and a removal give them."""
    budget = ParseBudget(memory_bytes=50 * 1_048_576, seconds=4.0)
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    (tmp_path / "elsewhere").mkdir(exist_ok=True)
    if not (corpus / "link").is_symlink():
        (corpus / "link").symlink_to(tmp_path / "elsewhere")  # a folder of the corpus that leads out of it
    reasons = [
        _refusal(lambda: safe_name("../..")).reason,
        _refusal(lambda: check_type("notes.exe")).reason,
        _refusal(lambda: check_type("notes")).reason,
        _refusal(lambda: check_size("notes.txt", 0)).reason,
        _refusal(lambda: check_size("notes.txt", 30 * 1_048_576)).reason,
        _document_refusal("notes.txt", budget.too_much_memory(), budget).reason,
        _document_refusal("notes.txt", budget.too_slow("deadline"), budget).reason,
        _document_refusal("notes.txt", budget.too_slow(), budget).reason,
        _document_refusal("notes.txt", DocumentError(Said("doc_no_text")), None).reason,
        _document_refusal("notes.txt", DocumentError(Said("doc_drm")), None).reason,
        _refusal(lambda: corpus_file(corpus, "")).reason,
        _refusal(lambda: corpus_file(corpus, "../x.txt")).reason,
        _refusal(lambda: corpus_file(corpus, "gone.txt")).reason,
        _refusal(lambda: corpus_file(corpus, "link/a.txt")).reason,
        _refusal(lambda: remove_document("x.txt", corpus, tmp_path / "index", None, frozenset())).reason,
        Reason(
            "notes.txt: not saved (No space left on device)",
            "not_saved",
            name="notes.txt",
            detail="No space left on device",
        ),
        Reason("nothing was added: the corpus folder cannot be written (x)", "unwritable", detail="x"),
        Reason("indexing failed, nothing was added: x", "indexing", detail="x"),
        Reason("not removed a.txt: it is the last document of the corpus", "last", doc="a.txt"),
        Reason("not removed a.txt: x", "not_removed", doc="a.txt", detail="x"),
        Reason("removed a.txt (2 documents, 9 passages left)", "removed", doc="a.txt", n=2, chunks=9),
    ]
    return reasons


def test_each_refusal_kind_has_its_english_line_from_the_catalogue(tmp_path: Path):
    """English renders each kind as the CLI says it, except where the page words it plainer (binary, encrypted)."""
    for reason in _every_refusal(tmp_path):
        if reason.key not in ("binary", "encrypted"):
            assert reason.said("en") == reason, (reason.key, reason.said("en"))
    kinds = {r.key for r in _every_refusal(tmp_path)}
    catalogued = {k.removeprefix("why_") for k in _catalogue("en")["corpus_status"] if k.startswith("why_")}
    assert kinds | {"binary", "upload", "unreadable"} == catalogued  # every key rendered here or in the add above


@pytest.mark.parametrize("lang", OTHERS)
def test_each_refusal_kind_is_said_in_the_page_language(tmp_path: Path, lang: str):
    for reason in _every_refusal(tmp_path):
        said = reason.said(lang)
        assert said != reason, (lang, reason.key)
        detail = str(reason.values.get("detail", "\0"))
        assert english_in(said.replace(detail, ""), lang, "corpus_status") == [], (lang, reason.key, said)


# --------------------------------------------------------------------------- Evaluate tab: charts


def _texts(fig) -> list[str]:
    """Every text a matplotlib figure draws (titles, axis labels, tick labels, legend entries and title)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(Text) if t.get_text() and t.get_visible()]


@pytest.fixture(scope="module")
def sample():
    from citeqa.evaluation.metrics import summarize

    results = _sample_results()
    return results, summarize(results)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_charts_are_drawn_in_the_page_language(sample, lang: str):
    from citeqa.evaluation.report import chart_texts, metrics_figure, reliability_figure

    results, metrics = sample
    words = chart_texts(lang)
    bars = "\n".join(_texts(metrics_figure(metrics, lang)))
    diagram = "\n".join(_texts(reliability_figure(results, lang=lang)))
    assert words["metrics_title"].format(n=3) in bars and words["score"] in bars and words["questions"] in bars
    assert words["tick_lang_first"] in bars and f"{words['overall']} (n=3)" in bars
    assert words["reliability_title"].format(n=3) in diagram and words["right_legend"] in diagram
    assert words["confidence"] in diagram and words["perfect"] in diagram
    for text in (bars, diagram):
        assert english_in(text, lang, "evaluate", "chart_") == [], (lang, text)


def test_the_report_s_charts_stay_english_by_default(sample):
    from citeqa.evaluation.report import metrics_figure, reliability_figure

    results, metrics = sample
    bars = _texts(metrics_figure(metrics))
    assert "citeqa evaluation: main metrics by question language (n=3)" in bars and "overall (n=3)" in bars
    assert "1st citation\nin question lang" in bars and "score (0-1)" in bars
    diagram = _texts(reliability_figure(results))
    assert "Reliability of confidence (n=3)" in diagram and "perfect calibration" in diagram


def test_the_tab_draws_its_charts_beside_the_run_s_once(sample, tmp_path: Path):
    from citeqa.app.web.evaluate.view import chart_paths
    from citeqa.evaluation.report import write_report

    results, metrics = sample
    written = {p.name: p for p in write_report(results, metrics, tmp_path / "run")}
    assert chart_paths(written, results, metrics, "en") == (written["metrics.png"], written["reliability.png"])
    drawn = chart_paths(written, results, metrics, "de")
    assert [p.name for p in drawn] == ["metrics.de.png", "reliability.de.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in drawn)
    assert drawn[0].read_bytes() != written["metrics.png"].read_bytes()
    stamp = drawn[0].stat().st_mtime_ns
    assert chart_paths(written, results, metrics, "de") == drawn and drawn[0].stat().st_mtime_ns == stamp
    assert not list((tmp_path / "run").glob(".*.part"))


# --------------------------------------------------------------------------- Evaluate tab: comparison


@pytest.fixture(scope="module")
def comparison():
    from citeqa.evaluation.compare import compare_runs

    return compare_runs(old_run(), new_run())


def test_the_english_comparison_table_is_the_cli_s(comparison):
    from citeqa.app.web.evaluate.view import comparison_table
    from citeqa.evaluation.compare import COLUMNS, format_delta

    table = comparison_table(comparison, "en")
    assert table["headers"] == [name or "verdict" for name in COLUMNS]
    assert [row[1:] for row in table["data"]] == [format_delta(d)[1:] for d in comparison.deltas]
    assert table["data"][0][0] == "right outcome"  # the metrics as the page's metrics table names them


@pytest.mark.parametrize("lang", OTHERS)
def test_the_comparison_table_is_headed_in_the_page_language(comparison, lang: str):
    from citeqa.app.web.evaluate.view import comparison_table

    table = comparison_table(comparison, lang)
    lab = _catalogue(lang)["evaluate"]
    assert table["headers"] == [
        lab["col_metric"], "n", lab["cmp_before"], lab["cmp_after"], lab["cmp_change"], lab["cmp_interval"],
        "+/-", "p", lab["verdict"],
    ]  # fmt: skip
    cells = "\n".join(str(c) for row in [table["headers"], *table["data"]] for c in row)
    assert lab["cmp_worse"] in cells  # q03-q12 broken: a regression
    assert english_in(cells, lang, "evaluate", "cmp_") == []
    assert english_in(cells, lang, "evaluate", "metric_") == []
    for english in ("before", "after", "change", "interval", "worse", "answer accuracy", "right outcome"):
        assert english not in cells.split("\n"), english
