"""Measure a candidate reader the way a milestone is chosen: alone, then in citeqa's pipeline.

    python -m citeqa.fitting.reader.milestone NAME INPUT [INPUT ...] [--data out/reader-data2] [--per-lang 200]
        [--against out/ms/shipped]

INPUTs are points of a training run (``weights-STEP.pt``, ``checkpoint.pt``) or exported deltas.
Into ``out/ms/NAME/`` it writes, one log per step, skipping a step whose output is already there
(so a run cut short goes on where it stopped):

1. ``avg.pt`` and ``average.log``: the inputs averaged and scored on the training run's dev sample
   (torch float32; :mod:`citeqa.fitting.reader.average`). A single exported delta is used as it is.
2. ``reader.safetensors``: the int8 delta users would get (:mod:`citeqa.fitting.reader.export`).
3. ``evaluate.log``: the ONNX build users run, on a seeded sample of ``--per-lang`` held-out dev
   questions per language, and the no-answer separation (:mod:`citeqa.fitting.reader.evaluate`).
4. ``fit/`` and ``fit.log``: :mod:`citeqa.fitting.scorer` out of fold over the four dev QA sets, with the
   arguments the shipped scorer was fitted with (its weights file's ``fitted.by``, without ``--write``).
5. ``paired.log``: :mod:`citeqa.fitting.paired` against ``--against``'s ``fit/`` (run this script on the
   shipped delta first, as NAME ``shipped``), question by question with a sign test.

Nothing here writes into the package: shipping is the commands of the model card.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

from citeqa.qa.scoring import weights_path

#: The repository the commands run in (the scorer's QA files and indexes are named from it).
ROOT = Path(__file__).resolve().parents[4]
#: The shipped scorer whose ``fitted.by`` names the arguments a candidate is fitted with.
SCORER = weights_path("multilingual-e5-small").with_name("multilingual-e5-small+reader.json")
#: How ``fitted.by`` names the scorer's fit: the module, or the script it was before.
SCORER_COMMANDS = (["python", "-m", "citeqa.fitting.scorer"], ["eval/fit_scorer.py"])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.reader.milestone", description=__doc__.split("\n\n")[0])
    p.add_argument("name", help="the milestone's folder under --root")
    p.add_argument("inputs", nargs="+", type=Path, help="checkpoints (.pt) or exported deltas")
    p.add_argument("--data", type=Path, default=Path("out/reader-data2"), help="prepared data (its dev split)")
    p.add_argument("--per-lang", type=int, default=200, help="held-out dev questions per language to read")
    p.add_argument("--against", type=Path, default=Path("out/ms/shipped"), help="a milestone folder to pair with")
    p.add_argument("--root", type=Path, default=Path("out/ms"))
    args = p.parse_args(argv)
    args.inputs = [i.resolve() for i in args.inputs]
    args.data, args.against = args.data.resolve(), args.against.resolve()
    here = args.root.resolve() / args.name
    here.mkdir(parents=True, exist_ok=True)
    delta = _delta(args.inputs, here, args.data)
    _step(
        here / "evaluate.log",
        [
            "-m",
            "citeqa.fitting.reader.evaluate",
            "--data",
            str(args.data / "dev.jsonl"),
            "--per-lang",
            str(args.per_lang),
        ]
        + ["--delta", str(delta)],
    )
    _step(here / "fit.log", _scorer_args() + ["--reader-delta", str(delta), "--cache", str(here / "fit")])
    if (args.against / "fit").is_dir() and args.against != here:
        _step(here / "paired.log", ["-m", "citeqa.fitting.paired", str(args.against / "fit"), str(here / "fit")])


def _delta(inputs: list[Path], here: Path, data: Path) -> Path:
    """The int8 delta of the inputs' mean (an exported delta given alone is its own)."""
    if len(inputs) == 1 and inputs[0].suffix == ".safetensors":
        return inputs[0]
    _step(
        here / "average.log",
        ["-m", "citeqa.fitting.reader.average", *map(str, inputs), "--out", str(here / "avg.pt"), "--dev", str(data)],
        done=here / "avg.pt",
    )
    delta = here / "reader.safetensors"
    _step(
        here / "export.log",
        ["-m", "citeqa.fitting.reader.export", "--checkpoint", str(here / "avg.pt"), "--out", str(delta)],
        done=delta,
    )
    return delta


def _scorer_args() -> list[str]:
    """:mod:`citeqa.fitting.scorer` with the arguments the shipped scorer was fitted with, less ``--write``."""
    by = json.loads(SCORER.read_text())["fitted"]["by"]
    words = [w for w in shlex.split(by) if w != "--write"]
    for command in SCORER_COMMANDS:
        if words[: len(command)] == command:
            return ["-m", "citeqa.fitting.scorer", *words[len(command) :]]
    raise SystemExit(f"{SCORER.name}: fitted.by is not a command of the scorer's fit: {by!r}")


def _step(log: Path, command: list[str], done: Path | None = None) -> None:
    """Run one script of the chain into its log, unless its output (``done``, else the log) exists."""
    if (done or log).exists():
        print(f"have {done or log}")
        return
    print("running", shlex.join(command), ">", log, flush=True)
    with open(log.with_suffix(".part"), "w") as out:
        rc = subprocess.run([sys.executable, *command], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise SystemExit(f"{shlex.join(command)} failed (exit {rc}): see {log.with_suffix('.part')}")
    log.with_suffix(".part").replace(log)
    print(log.read_text().rstrip().splitlines()[-1] if log.read_text().strip() else "", flush=True)


if __name__ == "__main__":
    main()
