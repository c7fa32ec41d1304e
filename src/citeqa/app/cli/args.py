"""The ``citeqa`` command line: its subcommands, their options and the checks of each value.

:func:`parser` is what :func:`citeqa.app.cli.commands.main` parses with; a value outside an option's range
is argparse's one-line usage error, before anything loads.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citeqa.errors import ConfigError


def parser() -> argparse.ArgumentParser:
    """The ``citeqa`` parser: index, ask, check, eval, serve."""
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
        p.add_argument(
            "--backend",
            default=os.environ.get("CITEQA_BACKEND") or None,
            metavar="URLS",
            help="answer from a PostgreSQL index instead of the --index folder: postgresql://HOST:PORT/DB, "
            "one URL per shard separated by commas, each with ?replica=HOST:PORT for every streaming replica "
            "to read from (default: $CITEQA_BACKEND; unset: the folder). "
            "`citeqa index --backend` builds in --index as always, then publishes the new generation there",
        )

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

    p.add_argument(
        "--ann",
        choices=("exact", "hnsw"),
        default=None,
        help="with --backend: exact cosine search, or pgvector's HNSW graph (default: exact up to "
        "50,000 passages, as the local index)",
    )

    p = sub.add_parser("ask", help="answer one question")
    common(p)
    _engine_options(p)
    p.add_argument("question")
    p.add_argument("-k", type=int, default=5, help="number of cited passages (default 5)")
    p.add_argument("--history", action="append", default=[], help="an earlier question (repeatable)")
    _format_options(p, "the answer record")

    p = sub.add_parser("check", help="check a claim against the documents: supported, conflicting or not_found")
    common(p)
    _engine_options(p)
    p.add_argument("claim")
    p.add_argument("-k", type=int, default=5, help="number of passages shown (default 5)")
    _format_options(p, "the check record")

    p = sub.add_parser("eval", help="evaluate on a QA file or a claim file (JSONL or CSV) or a SQuAD file")
    common(p)
    p.set_defaults(index=None)  # index/ for a QA file; --squad builds its own index unless --index is given
    _engine_options(p)
    p.add_argument(
        "qa_file",
        type=Path,
        nargs="?",
        help="QA file (JSONL or CSV), a claim file (its rows have claim and verdict: claim checking "
        "is evaluated), or a SQuAD JSON file (evaluated as with --squad); leave out with --squad",
    )
    p.add_argument("-k", type=int, default=10, help="passages cited per question (default 10, for MRR@10)")
    p.add_argument(
        "--predictions",
        type=Path,
        default=None,
        metavar="PRED",
        help="write one JSON line per question (or claim) to PRED; for a QA file also what produced the run, "
        "beside it with .meta.json for PRED's suffix (out/run.jsonl: out/run.meta.json)",
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
        "--json",
        action="store_true",
        help="print the report as JSON on stdout (what --report writes to report.json, with the comparison "
        "and the files written); the rest goes to stderr",
    )
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
    _engine_options(p)
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
        "--max-upload-files",
        type=_upload_files,
        default=DEFAULT_MAX_FILES,
        metavar="N",
        help=f"most files one add may hold, 1 to {MAX_UPLOAD_FILES} (default {DEFAULT_MAX_FILES}); "
        "a larger add is refused, nothing of it read",
    )
    p.add_argument(
        "--eval-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="QA files (.jsonl, .csv) the Evaluate tab offers (default: eval/ beside the corpus folder)",
    )
    p.add_argument(
        "--eval-max-questions",
        type=_positive,
        default=DEFAULT_EVAL_MAX_QUESTIONS,
        metavar="N",
        help=f"most questions one Evaluate-tab run may take, at least 1 (default {DEFAULT_EVAL_MAX_QUESTIONS}); "
        "a larger QA file is refused before it runs (the server runs one evaluation at a time)",
    )
    p.set_defaults(auth_on_command_line=False)
    return parser


def command_defaults(command: str) -> dict[str, Any]:
    """The value each option of ``command`` takes when it is not given, for a command whose positional
    arguments may be left out (eval, index, serve)."""
    return vars(parser().parse_args([command]))


FORMATS = ("text", "json", "markdown")


def _format_options(p: argparse.ArgumentParser, record: str) -> None:
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help=f"text (default), json ({record}) or markdown (as the chat's conversation download)",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")


def output_format(args: argparse.Namespace) -> str:
    """``--format`` and ``--json`` as one format (ConfigError when they disagree)."""
    if args.json and args.format not in (None, "json"):
        raise ConfigError(f"--json and --format {args.format} disagree; give one of them")
    return "json" if args.json else (args.format or "text")


class _AuthAction(argparse.Action):
    """Stores ``--auth`` and notes that it came from the command line (and so shows in ``ps``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
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


#: The most ``--max-upload-files`` may be: an add of more would hold every other change for an hour or more.
MAX_UPLOAD_FILES = 500
#: ``citeqa.corpus.add.DEFAULT_MAX_FILES`` (not imported: every command parses its arguments first).
DEFAULT_MAX_FILES = 20
#: ``citeqa.app.web.holder.DEFAULT_EVAL_MAX_QUESTIONS`` (not imported: it needs the web app).
DEFAULT_EVAL_MAX_QUESTIONS = 2000


def _upload_files(value: str) -> int:
    number = _positive(value)
    if number > MAX_UPLOAD_FILES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_UPLOAD_FILES}, got {number}")
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


def _engine_options(p: argparse.ArgumentParser) -> None:
    """What the commands that answer choose of their engine: the reader and a question's time limit."""
    p.add_argument(
        "--reader",
        choices=("auto", "on", "off"),
        default="auto",
        help="the trained span reader: auto (on where it was fitted for the index's model: e5), on, "
        "or off (faster, rule-based short answers)",
    )
    p.add_argument(
        "--question-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="with --backend: end a question (or claim) that has waited this long on the shards with a "
        "one-line error (default: citeqa.engine.QUESTION_TIMEOUT_S, 30)",
    )


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value}")
    return seconds


def _auth_pair(value: str) -> tuple[str, str]:
    """``user:password`` as a pair; the password may itself hold colons."""
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise argparse.ArgumentTypeError("expected USER:PASSWORD")
    return user, password
