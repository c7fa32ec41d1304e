"""The ``citeqa eval`` command: a QA file, a SQuAD file or a claim file through the engine, its header,
table and notes printed (or its report as JSON with ``--json``), and one line per file written."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeqa.engine import Engine
    from citeqa.evaluation import RunHeader

#: Opens the engine the options name: ``(args, index=None, embedder=None)`` (the CLI's ``_open_engine``).
EngineOpener = Callable[..., "Engine"]
#: The model an index is built with: ``(args, index)`` (the CLI's ``_index_model``).
ModelChooser = Callable[[argparse.Namespace, Path], str]


def run_eval(args: argparse.Namespace, open_engine: EngineOpener, index_model: ModelChooser) -> int:
    """``citeqa eval``: a QA file (or ``--squad``), or a claim file; ``open_engine(args, index=None,
    embedder=None)`` opens the engine the options name, ``index_model(args, index)`` the model a SQuAD
    index is built with. Returns the exit code: 1 when a threshold is missed or a metric regressed."""
    from citeqa import evaluation as ev
    from citeqa.errors import ConfigError

    if (args.qa_file is None) == (args.squad is None):
        raise ConfigError("give either a QA file or --squad FILE")
    kind = ev.file_kind(args.qa_file) if args.qa_file is not None else None
    if kind == "claims":
        return _eval_claims(args, open_engine)
    if kind == "squad":  # `citeqa eval dev-v2.0.json`: run it as --squad would
        print(f"citeqa: {args.qa_file} is a SQuAD file: evaluating it as --squad does", file=sys.stderr)
        args.squad, args.qa_file = args.qa_file, None
    thresholds = ev.parse_thresholds(args.fail_under) if args.fail_under else {}
    if args.compare is None and (args.fail_on_regression or args.compare_report is not None):
        raise ConfigError("--fail-on-regression and --compare-report need --compare OLD_PREDICTIONS")
    previous = ev.load_predictions(args.compare) if args.compare is not None else None
    if args.squad is not None:
        squad_set = ev.load_squad(args.squad)
        index, corpus = ev.squad_folders(args.squad, args.index, args.squad_corpus)
        ev.write_corpus(squad_set, corpus)
        items, source, engine = (
            list(squad_set.items),
            args.squad,
            _eval_index_and_open(args, corpus, index, open_engine, index_model),
        )
    else:
        items, source = ev.load_qa(args.qa_file), args.qa_file
        engine = open_engine(args)
    results = ev.evaluate_engine(engine, items, k=args.k, progress=sys.stderr.isatty())
    metrics = ev.summarize(results)
    english = bool(items) and all(item.lang == "en" for item in items)
    squad = ev.squad_scores(results) if args.squad is not None or english else None
    provenance = ev.collect_provenance(engine, source, run={"k": args.k})
    header = _eval_header(args, engine, source, provenance)
    if not args.json:
        _print_lines(ev.header_lines(header))
        ev.print_table(metrics, squad=squad)
        _print_lines([*ev.table_notes(squad is not None), *ev.reliability_lines(ev.reliability(results))])
    written: list[Path] = []
    if args.predictions is not None:
        written.append(ev.write_predictions(results, args.predictions, provenance))
        written.append(ev.meta_path(args.predictions))
    if args.squad_predictions is not None:
        written.append(ev.write_squad_predictions(results, args.squad_predictions))
    settings = {"qa_file": source, "index": engine.index_dir, "k": args.k}
    if args.report is not None:
        written.extend(ev.write_report(results, metrics, args.report, settings, provenance, header=header, squad=squad))
    failures = ev.check_thresholds(metrics, thresholds)
    regressions: list[str] = []
    comparison = None
    if previous is not None:
        current = [ev.prediction_record(r) for r in results]
        comparison = ev.compare_runs(
            previous.records, current, old_provenance=previous.provenance, new_provenance=provenance
        )
        if not args.json:
            ev.print_comparison(comparison, old_label=str(args.compare))
        if args.compare_report is not None:
            written.append(ev.write_comparison(comparison, args.compare_report))
        regressions = ev.regression_lines(comparison) if args.fail_on_regression else []
    _print_written(written, args.json)
    if args.json:
        record = ev.report_record(metrics, settings, provenance, results=results, header=header, squad=squad)
        record.update(
            comparison=comparison.to_dict() if comparison is not None else None,
            below_threshold=failures,
            regressions=regressions,
            written=[str(path) for path in written],
        )
        print(ev.report_json(record))
    for line in failures:
        print(f"below threshold: {line}", file=sys.stderr)
    for line in regressions:
        print(f"regression: {line}", file=sys.stderr)
    return 1 if failures or regressions else 0


def _eval_header(args: argparse.Namespace, engine: Engine, source: Path, provenance: dict[str, Any]) -> RunHeader:
    """The header of ``citeqa eval``: what :func:`citeqa.evaluation.run_header` takes from the run's
    provenance, the index as given (PostgreSQL shards without user or password), and the settings that
    differ from the defaults: the answering options given (``-k``, ``--reader``, ``--question-timeout``)
    and any answer setting that is not the one fitted for the index's model and reader."""
    from citeqa import evaluation as ev
    from citeqa.app.cli.args import command_defaults

    defaults = command_defaults("eval")
    flags = {"k": "-k", "reader": "--reader", "question_timeout": "--question-timeout"}
    changed = {flag: getattr(args, dest) for dest, flag in flags.items() if getattr(args, dest) != defaults[dest]}
    changed.update(ev.changed_settings(provenance["settings"], ev.default_settings(engine)))
    return ev.run_header(provenance, source, _index_label(args, engine), changed)


def _index_label(args: argparse.Namespace, engine: Engine) -> str:
    """The index a command answers from: its folder, or ``postgresql`` and each shard's
    ``host:port/database`` (never a user or password)."""
    if engine.index_dir is not None:
        return str(engine.index_dir)
    from citeqa.pg.shards import label

    return "postgresql " + ", ".join(label(url) for url in str(args.backend).split(","))


def _print_lines(lines: Sequence[str], err: bool = False) -> None:
    """Print ``lines`` as they are (no markup), to stderr with ``err``."""
    for line in lines:
        print(line, file=sys.stderr if err else sys.stdout)


def _print_written(paths: Sequence[Path], to_stderr: bool) -> None:
    """One "wrote PATH" line per file written (on stderr when stdout carries JSON)."""
    from citeqa.messages import evaluate_labels

    _print_lines([evaluate_labels("en")["run_wrote"].format(path=path) for path in paths], err=to_stderr)


def _eval_claims(args: argparse.Namespace, open_engine: EngineOpener) -> int:
    """``citeqa eval CLAIMS_FILE``: check every claim, print accuracy per gold verdict."""
    from citeqa import evaluation as ev
    from citeqa.errors import ConfigError

    unused = [
        name
        for name, value in (
            ("--compare", args.compare),
            ("--report", args.report),
            ("--squad-predictions", args.squad_predictions),
        )
        if value is not None
    ]
    if unused:
        raise ConfigError(f"{', '.join(unused)} work on QA files, not on a claim file")
    thresholds = ev.parse_claim_thresholds(args.fail_under)
    items = ev.load_claims(args.qa_file)
    engine = open_engine(args)
    results = ev.evaluate_claims(lambda claim: engine.check(claim, k=args.k), items)
    metrics = ev.summarize_claims(results)
    provenance = ev.collect_provenance(engine, args.qa_file, run={"k": args.k})
    header = _eval_header(args, engine, args.qa_file, provenance)
    if not args.json:
        _print_lines(ev.header_lines(header))
        ev.print_claims_table(metrics)
    written = [ev.write_claim_predictions(results, args.predictions)] if args.predictions is not None else []
    _print_written(written, args.json)
    failures = ev.check_claim_thresholds(metrics, thresholds)
    if args.json:
        record = {
            "header": header.to_dict(),
            "provenance": provenance,
            "metrics": metrics.to_dict(),
            "below_threshold": failures,
            "written": [str(path) for path in written],
        }
        print(ev.report_json(record))
    for line in failures:
        print(f"below threshold: {line}", file=sys.stderr)
    return 1 if failures else 0


def _eval_index_and_open(
    args: argparse.Namespace, corpus: Path, index: Path, open_engine: EngineOpener, index_model: ModelChooser
) -> Engine:
    """Bring the index of ``corpus`` up to date (as ``citeqa index`` does) and open it with the same embedder."""
    from citeqa.engine import Engine

    args.rebuild = False
    embedder = args.embedder_factory(index_model(args, index))
    report = Engine.build(corpus, index, embedder, progress=sys.stderr.isatty())
    work = "up to date" if report.up_to_date else f"embedded {report.embedded}, reused {report.reused}"
    print(
        f"SQuAD corpus {corpus}: {len(report.documents)} paragraphs; index {index}: {report.chunks} passages ({work})",
        file=sys.stderr if args.json else sys.stdout,
    )
    return open_engine(args, index, embedder)
