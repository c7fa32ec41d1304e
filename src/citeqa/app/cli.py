"""The ``citeqa`` command: index, ask, eval, serve. A thin shell over :mod:`citeqa.engine`."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from citeqa.errors import CiteqaError

if TYPE_CHECKING:
    from citeqa.embedding import Embedder
    from citeqa.engine import Engine

#: Makes the embedder for a model name or path.
EmbedderFactory = Callable[[str], "Embedder"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citeqa", description="Extractive, cited answers from your documents.")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, corpus: bool = False) -> None:
        p.add_argument("--index", type=Path, default=Path("index"), help="index folder (default: index/)")
        p.add_argument(
            "--model",
            default=None,
            help="embedding model: the index's own by default (a new index: multilingual-e5-small); "
            "a sentence-transformers name or path works too",
        )
        if corpus:
            p.add_argument("--corpus", type=Path, default=Path("corpus"), help="documents folder (default: corpus/)")

    p = sub.add_parser("index", help="build or refresh the index for a corpus")
    common(p, corpus=True)
    p.add_argument("--rebuild", action="store_true", help="start over instead of updating")
    p.add_argument("--chunk-size", type=int, default=None, help="passage size in characters")
    p.add_argument("--chunk-overlap", type=int, default=None, help="passage overlap in characters")
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="read, chunk and embed on Ray: a local Ray started for this run (no ADDRESS), or an "
        "existing cluster (auto, ray://HOST:PORT); writes the same index. Needs "
        "pip install -e '.[ray]'",
    )
    p.add_argument(
        "--ray-workers",
        type=_positive,
        default=None,
        metavar="N",
        help="embedding workers for --ray, one CPU each (default: one per CPU of the cluster)",
    )

    p = sub.add_parser("ask", help="answer one question")
    common(p)
    _reader_option(p)
    p.add_argument("question")
    p.add_argument("-k", type=int, default=5, help="number of cited passages (default 5)")
    p.add_argument("--history", action="append", default=[], help="an earlier question (repeatable)")
    _format_options(p, "the answer record")

    p = sub.add_parser("check", help="check a claim against the documents: supported, conflicting or not_found")
    common(p)
    _reader_option(p)
    p.add_argument("claim")
    p.add_argument("-k", type=int, default=5, help="number of passages shown (default 5)")
    _format_options(p, "the check record")

    p = sub.add_parser("eval", help="evaluate on a QA file or a claim file (JSONL or CSV) or a SQuAD file")
    common(p)
    p.set_defaults(index=None)  # index/ for a QA file; --squad builds its own index unless --index is given
    _reader_option(p)
    p.add_argument(
        "qa_file",
        type=Path,
        nargs="?",
        help="QA file (JSONL or CSV), or a claim file (its rows have claim and verdict: claim checking "
        "is evaluated); leave out with --squad",
    )
    p.add_argument("-k", type=int, default=10, help="passages cited per question (default 10, for MRR@10)")
    p.add_argument(
        "--predictions",
        type=Path,
        default=None,
        metavar="PRED",
        help="write one JSON line per question, and what produced the run to PRED.meta.json",
    )
    p.add_argument(
        "--report",
        type=Path,
        default=None,
        help="write report.json, questions.csv, metrics.png and reliability.png here",
    )
    p.add_argument(
        "--fail-under",
        default=None,
        help="e.g. hit1=0.9,answer=0.85: exit 1 when a metric is lower; for a claim file "
        "accuracy, supported, conflicting, not_found and not_found_as_supported (a maximum count), "
        "e.g. accuracy=0.85,not_found_as_supported=0",
    )
    p.add_argument(
        "--compare",
        type=Path,
        default=None,
        metavar="OLD_PREDICTIONS",
        help="compare with an earlier run's --predictions file: metric changes with paired 95%% "
        "bootstrap intervals and sign tests (McNemar's for yes/no metrics), fixed and broken "
        "questions",
    )
    p.add_argument("--compare-report", type=Path, default=None, metavar="PATH", help="write the comparison as JSON")
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --compare: exit 1 when a metric got significantly worse: the 95%% interval of "
        "its change lies entirely below 0 (above 0 for false abstention) and the sign test "
        "gives p < 0.05",
    )
    p.add_argument(
        "--squad",
        type=Path,
        default=None,
        metavar="FILE",
        help="evaluate on a SQuAD v1.1/v2.0 JSON file: write one .txt per paragraph to --squad-corpus, "
        "index them (--index, default out/squad-STEM/index; only changes are embedded), evaluate",
    )
    p.add_argument(
        "--squad-corpus",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder for the SQuAD paragraphs (default out/squad-STEM/corpus, or beside --index)",
    )
    p.add_argument(
        "--squad-predictions",
        type=Path,
        default=None,
        metavar="OUT",
        help='write {id: short answer or ""}, the file the official SQuAD v2 evaluation script reads',
    )

    p = sub.add_parser("serve", help="start the chat UI")
    common(p, corpus=True)
    _reader_option(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=_port, default=7860, help="port to listen on (default 7860)")
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests addressed to this host name (repeatable); others are refused, "
        "which stops DNS-rebinding pages",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        action="append",
        default=[],
        metavar="IP",
        help="a reverse proxy whose X-Forwarded-For header names the client (repeatable; an address "
        "or network, as uvicorn takes it); by default the header is ignored",
    )
    p.add_argument(
        "--auth",
        type=_auth_pair,
        action=_AuthAction,
        default=os.environ.get("CITEQA_AUTH") or None,
        metavar="USER:PASSWORD",
        help="require this login (default: $CITEQA_AUTH; none when unset). A value given here is "
        "visible to every local user in the process list: prefer CITEQA_AUTH=USER:PASSWORD",
    )
    p.add_argument(
        "--max-upload-mb",
        type=_upload_mb,
        default=20.0,
        help="largest accepted upload, more than 0 and at most 1024 (default 20 MB)",
    )
    p.add_argument(
        "--eval-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="QA files (.jsonl, .csv) the Evaluate tab offers (default: eval/ beside the corpus folder)",
    )
    p.set_defaults(auth_on_command_line=False)
    return parser


FORMATS = ("text", "json", "markdown")


def _format_options(p: argparse.ArgumentParser, record: str) -> None:
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help=f"text (default), json ({record}) or markdown (as the chat's conversation download)",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")


def _output_format(args: argparse.Namespace) -> str:
    from citeqa.errors import ConfigError

    if args.json and args.format not in (None, "json"):
        raise ConfigError(f"--json and --format {args.format} disagree; give one of them")
    return "json" if args.json else (args.format or "text")


def _infos(engine: Engine, doc_ids) -> dict:
    """DocumentInfo of each cited document, for citations with their indexing date."""
    return {d: engine.document_info(d) for d in set(doc_ids) if d in engine.data.documents}


class _AuthAction(argparse.Action):
    """Stores ``--auth`` and notes that it came from the command line (and so shows in ``ps``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.auth_on_command_line = True


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {value!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be from 1 to 65535, got {port}")
    return port


def _upload_mb(value: str) -> float:
    try:
        size = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size in MB, got {value!r}") from None
    if not 0 < size <= 1024:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 1024 MB, got {value}")
    return size


def _reader_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reader",
        choices=("auto", "on", "off"),
        default="auto",
        help="the trained span reader: auto (on where it was fitted for the index's model: e5), on, "
        "or off (faster, rule-based short answers)",
    )


def _auth_pair(value: str) -> tuple[str, str]:
    """``user:password`` as a pair; the password may itself hold colons."""
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise argparse.ArgumentTypeError("expected USER:PASSWORD")
    return user, password


def main(argv: Sequence[str] | None = None, embedder_factory: EmbedderFactory | None = None) -> int:
    """Entry point: run a command and turn citeqa errors into one-line messages.

    ``embedder_factory`` makes the embedder for a model name (default: a sentence-transformers
    model); tests pass a model-free one.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = _parser().parse_args(argv)
    args.embedder_factory = embedder_factory if embedder_factory is not None else _default_embedder
    try:
        return _COMMANDS[args.command](args)
    except CiteqaError as exc:
        print(f"citeqa: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("citeqa: interrupted", file=sys.stderr)
        return 130


def _default_embedder(model: str) -> Embedder:
    from citeqa.embedding import load_embedder

    return load_embedder(model)


def _open_engine(args: argparse.Namespace) -> Engine:
    """The engine over ``--index``, with the embedder for the index's model (or ``--model``)."""
    from citeqa.engine import Engine
    from citeqa.index.manifest import check_model
    from citeqa.index.store import load_index

    data = load_index(args.index)
    check_model(data.manifest, args.model)
    model = data.manifest.model if args.model is None else args.model
    return Engine(data, args.embedder_factory(model), index_dir=args.index, reader=_reader(args, data.manifest.model))


def _reader(args: argparse.Namespace, model: str):
    from citeqa.engine import make_reader

    return make_reader(model, getattr(args, "reader", "auto"))


def _index_model(args: argparse.Namespace, index: Path) -> str:
    """The model to index with: ``--model``, else the live index's own, else the default."""
    from citeqa.embedding import DEFAULT_MODEL
    from citeqa.errors import IndexStoreError
    from citeqa.index.manifest import peek_model
    from citeqa.index.store import current_generation

    if args.model is not None:
        return args.model
    if not args.rebuild:
        try:
            live = current_generation(index)
        except IndexStoreError:  # a damaged index: update_index reports it
            live = None
        own = peek_model(live) if live is not None else None
        if own is not None:
            return own
    return DEFAULT_MODEL


def _cmd_index(args: argparse.Namespace) -> int:
    from citeqa.errors import ConfigError
    from citeqa.index.builder import update_index
    from citeqa.ingest.chunking import ChunkerSettings

    chunker = None
    if args.chunk_size is not None or args.chunk_overlap is not None:
        base = ChunkerSettings()
        chunker = ChunkerSettings(
            args.chunk_size if args.chunk_size is not None else base.size,
            args.chunk_overlap if args.chunk_overlap is not None else base.overlap,
        )
    model = _index_model(args, args.index)
    embedder = args.embedder_factory(model)
    progress = sys.stderr.isatty()
    note = ""
    if args.ray is None:
        if args.ray_workers is not None:
            raise ConfigError("--ray-workers needs --ray")
        report = update_index(args.corpus, args.index, embedder, chunker, rebuild=args.rebuild, progress=progress)
    else:
        from citeqa.index.ray_build import RayOptions, ray_steps

        # The workers build their own embedder: the factory and the model name travel, not the model.
        factory = functools.partial(args.embedder_factory, model)
        with ray_steps(factory, RayOptions(address=args.ray, workers=args.ray_workers), progress) as steps:
            report = update_index(
                args.corpus, args.index, embedder, chunker, rebuild=args.rebuild, progress=progress, steps=steps
            )
        peaks = sorted(steps.stats.embed_peak_mb.values())
        if peaks:
            note = f"on Ray: {len(peaks)} embedding workers, peak memory per worker {peaks[0]:.0f}-{peaks[-1]:.0f} MB"
    if report.rebuilt_because:
        print(f"rebuilt the whole index with {embedder.model_id}: {report.rebuilt_because}")
    if report.up_to_date:
        print(f"index up to date: {len(report.unchanged)} documents, {report.chunks} passages")
    else:
        print(
            f"indexed {len(report.documents)} documents, {report.chunks} passages "
            f"(added {len(report.added)}, changed {len(report.changed)}, removed {len(report.removed)}; "
            f"embedded {report.embedded}, reused {report.reused}) in {report.seconds:.1f} s"
        )
    if note:
        print(note)
    for item in report.skipped:
        print(f"skipped {item.doc_id}: {item.reason}")
    return 0


def _cmd_ask(args: argparse.Namespace) -> int:
    fmt = _output_format(args)
    engine = _open_engine(args)
    answer = engine.ask(args.question, history=tuple(args.history), k=args.k)
    if fmt == "json":
        print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    elif fmt == "markdown":
        from citeqa.app.evidence import conversation_markdown

        infos = _infos(engine, (c.doc_id for c in answer.citations))
        print(conversation_markdown([answer], infos, engine.data.documents), end="")
    else:
        from citeqa.app.render import print_answer

        print_answer(answer, documents=engine.data.documents)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    fmt = _output_format(args)
    engine = _open_engine(args)
    check = engine.check(args.claim, k=args.k)
    if fmt == "json":
        print(json.dumps(check.to_dict(), ensure_ascii=False, indent=2))
    elif fmt == "markdown":
        from citeqa.app.evidence import conversation_markdown

        infos = _infos(engine, (e.citation.doc_id for e in check.evidence))
        print(conversation_markdown([check], infos, engine.data.documents), end="")
    else:
        from citeqa.app.render import print_check

        print_check(check, documents=engine.data.documents)
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from citeqa import evaluation as ev
    from citeqa.errors import ConfigError

    if (args.qa_file is None) == (args.squad is None):
        raise ConfigError("give either a QA file or --squad FILE")
    if args.qa_file is not None and ev.file_kind(args.qa_file) == "claims":
        return _eval_claims(args)
    thresholds = ev.parse_thresholds(args.fail_under) if args.fail_under else {}
    if args.compare is None and (args.fail_on_regression or args.compare_report is not None):
        raise ConfigError("--fail-on-regression and --compare-report need --compare OLD_PREDICTIONS")
    previous = ev.load_predictions(args.compare) if args.compare is not None else None
    if args.squad is not None:
        squad = ev.load_squad(args.squad)
        index, corpus = ev.squad_folders(args.squad, args.index, args.squad_corpus)
        ev.write_corpus(squad, corpus)
        items, source, engine = list(squad.items), args.squad, _eval_index_and_open(args, corpus, index)
    else:
        items, source = ev.load_qa(args.qa_file), args.qa_file
        engine = _open_engine(argparse.Namespace(**{**vars(args), "index": args.index or Path("index")}))
    results = ev.evaluate_engine(engine, items, k=args.k, progress=sys.stderr.isatty())
    metrics = ev.summarize(results)
    ev.print_table(metrics)
    for b in ev.reliability(results):
        right = "n/a" if b.right is None else f"{b.right:.2f}"
        print(f"confidence {b.low:.1f}-{b.high:.1f}: {b.n} questions, right {right}")
    provenance = ev.collect_provenance(engine, source, run={"k": args.k})
    if args.predictions is not None:
        ev.write_predictions(results, args.predictions, provenance)
    if args.squad_predictions is not None:
        print(f"wrote {ev.write_squad_predictions(results, args.squad_predictions)}")
    if args.report is not None:
        settings = {"qa_file": source, "index": engine.index_dir, "k": args.k}
        for path in ev.write_report(results, metrics, args.report, settings, provenance):
            print(f"wrote {path}")
    failures = ev.check_thresholds(metrics, thresholds)
    for line in failures:
        print(f"below threshold: {line}", file=sys.stderr)
    regressions = []
    if previous is not None:
        current = [ev.prediction_record(r) for r in results]
        comparison = ev.compare_runs(
            previous.records, current, old_provenance=previous.provenance, new_provenance=provenance
        )
        ev.print_comparison(comparison, old_label=str(args.compare))
        if args.compare_report is not None:
            print(f"wrote {ev.write_comparison(comparison, args.compare_report)}")
        regressions = ev.regression_lines(comparison) if args.fail_on_regression else []
        for line in regressions:
            print(f"regression: {line}", file=sys.stderr)
    return 1 if failures or regressions else 0


def _eval_claims(args: argparse.Namespace) -> int:
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
    engine = _open_engine(argparse.Namespace(**{**vars(args), "index": args.index or Path("index")}))
    results = ev.evaluate_claims(lambda claim: engine.check(claim, k=args.k), items)
    metrics = ev.summarize_claims(results)
    ev.print_claims_table(metrics)
    if args.predictions is not None:
        print(f"wrote {ev.write_claim_predictions(results, args.predictions)}")
    failures = ev.check_claim_thresholds(metrics, thresholds)
    for line in failures:
        print(f"below threshold: {line}", file=sys.stderr)
    return 1 if failures else 0


def _eval_index_and_open(args: argparse.Namespace, corpus: Path, index: Path) -> Engine:
    """Bring the index of ``corpus`` up to date (as ``citeqa index`` does) and open it with the same embedder."""
    from citeqa.engine import Engine
    from citeqa.index.builder import update_index
    from citeqa.index.manifest import check_model
    from citeqa.index.store import load_index

    args.rebuild = False
    embedder = args.embedder_factory(_index_model(args, index))
    report = update_index(corpus, index, embedder, progress=sys.stderr.isatty())
    work = "up to date" if report.up_to_date else f"embedded {report.embedded}, reused {report.reused}"
    print(
        f"SQuAD corpus {corpus}: {len(report.documents)} paragraphs; index {index}: {report.chunks} passages ({work})"
    )
    data = load_index(index)
    check_model(data.manifest, args.model)
    return Engine(data, embedder, index_dir=index, reader=_reader(args, data.manifest.model))


def _cmd_serve(args: argparse.Namespace) -> int:
    from citeqa.app.server import bind
    from citeqa.app.serving import Terminated, die_of_sigterm
    from citeqa.app.ui import serve

    sock = bind(args.host, args.port)  # a busy port is a one-line error now, not after the model loads
    if args.auth_on_command_line:
        print(
            "citeqa: warning: --auth is visible to every local user in the process list; "
            "set CITEQA_AUTH=USER:PASSWORD instead",
            file=sys.stderr,
        )
    try:
        serve(
            lambda: _open_engine(args),
            corpus_dir=args.corpus,
            host=args.host,
            port=args.port,
            auth=args.auth,
            max_upload_bytes=int(args.max_upload_mb * 1_048_576),
            allowed_hosts=tuple(args.allowed_host),
            sock=sock,
            qa_dir=args.eval_dir,
            forwarded_allow_ips=tuple(args.forwarded_allow_ips),
        )
    except Terminated:  # the server stopped and cleaned up; end as SIGTERM's default would have
        sock.close()
        die_of_sigterm()
    finally:
        sock.close()
    return 0


_COMMANDS = {"index": _cmd_index, "ask": _cmd_ask, "check": _cmd_check, "eval": _cmd_eval, "serve": _cmd_serve}

if __name__ == "__main__":
    raise SystemExit(main())
