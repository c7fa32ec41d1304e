"""citeqa under load: throughput and latency of `citeqa serve` with N concurrent API clients.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/load.py [--index DIR] [--clients 8] [--seconds 30] \\
        [--out out/load.json]

Method (issue 6/6, "the benchmark reports throughput and p95 under that load"):

1. **Index.** ``--index DIR`` is reused when it already holds an index (a ``CURRENT``
   file), otherwise ``citeqa index --index DIR --corpus CORPUS`` builds it there. Without
   ``--index`` one is built over ``corpus/`` in a temporary folder, removed at the end.
2. **Server.** ``citeqa serve --index DIR --host 127.0.0.1 --port P`` (P a free loopback
   port) runs as a subprocess in its own process group; the benchmark waits until the
   page answers HTTP 200 and one ``/ask`` call returns a record (bounded by
   ``--start-timeout``). It is always stopped at the end (SIGTERM, then SIGKILL, to the
   whole group). Its output goes to ``<out>.serve.log``.
3. **Serial baseline.** One ``gradio_client.Client`` asks the questions of
   ``bench/questions.json`` (10 es, 10 pt, 10 en) in order, one at a time, for
   ``--seconds``. The first record for each question is the reference answer.
4. **Under load.** ``--clients`` threads, each with its own ``Client``, connect first,
   then start together (a barrier) and ask the same questions in a loop for ``--seconds``,
   client *n* starting at question ``n * 30 / clients`` so the languages mix at every
   moment. A request started before the deadline is finished and counted.

Latency is the wall time of one ``/ask`` call as a client sees it (``submit`` until the
result is in, queueing in the server included; creating the ``Client`` is not counted).
Throughput is answers (records without ``error``) per second of wall time, from the start
of the phase to the end of its last request. Every record of both phases is compared
with the reference answer minus ``latency_ms`` (the engine is deterministic, so any
difference is a concurrency bug). ``latency_ms`` inside the records (the engine's own
time) is reported too, as ``server_p50_ms``/``server_p95_ms``.

Everything is bounded: a phase stops at ``--seconds`` and at ``--max-requests`` per client,
each call at ``--request-timeout``; traffic goes to 127.0.0.1 only (gradio_client's
analytics are off). Clients and server share the machine's cores, so on a small machine
the clients' own CPU use is part of what is measured.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, citeqa_bin, free_port, load_questions, machine, pct, vm_hwm_mb  # noqa: E402 - common.py sits beside this script  # noqa: E402

CORPUS = ROOT / "corpus"
LOCAL_ENV = {
    **ENV,
    "GRADIO_ANALYTICS_ENABLED": "False",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


# --------------------------------------------------------------------------- pure helpers


def comparable(record: object) -> object:
    """A record as JSON would carry it, without the timing that changes on every call."""
    record = json.loads(json.dumps(record, ensure_ascii=False))
    if isinstance(record, dict):
        record.pop("latency_ms", None)
    return record


def start_offsets(clients: int, questions: int) -> list[int]:
    """Where each client starts in the question list, spread evenly so languages mix."""
    return [(n * questions) // clients for n in range(clients)]


@dataclass
class Sample:
    """One ``/ask`` call as a client saw it."""

    client: int
    question: int
    seconds: float
    ok: bool  # a record without "error"
    same: bool | None  # equal to the reference (None: no reference, or the call failed)
    server_ms: float | None = None
    error: str | None = None
    end: float = 0.0  # perf_counter() when the call returned


@dataclass
class Phase:
    name: str
    clients: int
    wall_s: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    client_errors: list[str] = field(default_factory=list)


def summarize(phase: Phase) -> dict:
    """Requests, errors, throughput and latency percentiles of one phase."""
    samples = phase.samples
    lat = [s.seconds * 1000 for s in samples if s.ok]
    server = [s.server_ms for s in samples if s.ok and s.server_ms is not None]
    answers = sum(s.ok for s in samples)
    compared = [s for s in samples if s.same is not None]
    per_client = [sum(1 for s in samples if s.client == n) for n in range(phase.clients)]
    return {
        "clients": phase.clients,
        "wall_s": phase.wall_s,
        "requests": len(samples),
        "answers": answers,
        "errors": len(samples) - answers + len(phase.client_errors),
        "error_examples": sorted({s.error for s in samples if s.error})[:5] + phase.client_errors[:5],
        "throughput_per_s": answers / phase.wall_s if phase.wall_s > 0 else None,
        "latency_ms": {
            "p50": pct(lat, 0.5),
            "p95": pct(lat, 0.95),
            "max": max(lat) if lat else None,
            "mean": sum(lat) / len(lat) if lat else None,
            "n": len(lat),
        },
        "server_p50_ms": pct(server, 0.5),
        "server_p95_ms": pct(server, 0.95),
        "compared": len(compared),
        "mismatches": sum(1 for s in compared if not s.same),
        "identical_to_serial": bool(compared) and all(s.same for s in compared) and len(compared) == answers,
        "requests_per_client": per_client,
    }


# --------------------------------------------------------------------------- index and server


def ensure_index(index: Path, corpus: Path, log: Path) -> dict:
    """Reuse ``index`` when it holds one; otherwise build it with ``citeqa index``."""
    if (index / "CURRENT").is_file():
        return {"built": False}
    t0 = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(
            [citeqa_bin(), "index", "--index", str(index), "--corpus", str(corpus)],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env={**os.environ, **LOCAL_ENV},
            cwd=ROOT,
            timeout=3600,
            check=False,
        )
    if proc.returncode != 0:
        raise SystemExit(f"citeqa index failed with {proc.returncode}; see {log}")
    return {"built": True, "seconds": time.perf_counter() - t0}


class Server:
    """``citeqa serve`` in its own process group on a free loopback port."""

    def __init__(self, index: Path, corpus: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = log
        self._fh = log.open("w")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                citeqa_bin(),
                "serve",
                "--index",
                str(index),
                "--corpus",
                str(corpus),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            stdout=self._fh,
            stderr=subprocess.STDOUT,
            env={**os.environ, **LOCAL_ENV},
            cwd=ROOT,
            start_new_session=True,
        )

    def wait_ready(self, question: str, timeout: float) -> dict:
        import httpx

        deadline = self.started + timeout
        http_ready = None
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"citeqa serve exited with {self.proc.returncode}; see {self.log}")
            try:
                if httpx.get(self.url, timeout=2, trust_env=False).status_code == 200:
                    http_ready = time.perf_counter() - self.started
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        if http_ready is None:
            raise SystemExit(f"citeqa serve did not answer within {timeout:.0f} s; see {self.log}")
        client = new_client(self.url)
        try:
            record = client.submit(question, [], 5, "auto", api_name="/ask").result(
                timeout=max(1.0, deadline - time.perf_counter())
            )
        finally:
            client.close()
        if not isinstance(record, dict) or "error" in record:
            raise SystemExit(f"first /ask did not return an answer: {record!r}")
        return {"http_ready_s": http_ready, "first_answer_s": time.perf_counter() - self.started}

    def stop(self) -> None:
        try:
            if self.proc.poll() is None:
                for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
                    try:
                        os.killpg(self.proc.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        self.proc.wait(timeout=wait)
                        break
                    except subprocess.TimeoutExpired:
                        continue
            else:  # the leader is gone; make sure nothing of its group is left
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
        finally:
            self._fh.close()


def new_client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, analytics_enabled=False, download_files=False)


# --------------------------------------------------------------------------- phases


def complete_reference(url: str, questions: list[str], reference: dict, request_timeout: float) -> int:
    """Ask, one at a time, the questions a short serial phase left without a reference answer;
    returns how many were added to ``reference``."""
    missing = [i for i in range(len(questions)) if i not in reference]
    if not missing:
        return 0
    _, filled = run_phase(
        "fill", url, [questions[i] for i in missing], 1, request_timeout, len(missing), request_timeout, None
    )
    reference.update({missing[i]: rec for i, rec in filled.items()})
    return len(filled)


def run_phase(
    name: str,
    url: str,
    questions: list[str],
    clients: int,
    seconds: float,
    max_requests: int,
    request_timeout: float,
    reference: dict[int, object] | None,
) -> tuple[Phase, dict[int, object]]:
    """``clients`` threads, each with its own Client, asking in a loop until ``seconds`` pass.

    With ``reference=None`` the first record for each question becomes the reference (the
    serial phase); later records are compared with it.
    """
    phase = Phase(name, clients)
    if reference is not None and len(reference) < len(questions):
        raise ValueError("the reference must hold a record for every question")
    ref: dict[int, object] = dict(reference or {})
    ref_lock = threading.Lock()
    samples_lock = threading.Lock()
    offsets = start_offsets(clients, len(questions))
    times: dict[str, float] = {}

    def go() -> None:  # runs once, when every client is connected, before any is released
        times["start"] = time.perf_counter()
        times["stop"] = times["start"] + seconds

    barrier = threading.Barrier(clients + 1, action=go, timeout=request_timeout + 120)

    def worker(n: int) -> None:
        client = None
        try:
            try:
                client = new_client(url)
            finally:
                barrier.wait()  # never leave the others waiting, even when the connection failed
            if client is None:
                return
            stop = times["stop"]
            i = offsets[n]
            for _ in range(max_requests):
                if time.perf_counter() >= stop:
                    break
                qi = i % len(questions)
                i += 1
                t0 = time.perf_counter()
                try:
                    record = client.submit(questions[qi], [], 5, "auto", api_name="/ask").result(
                        timeout=request_timeout
                    )
                except Exception as exc:
                    s = Sample(n, qi, time.perf_counter() - t0, False, None, error=f"{type(exc).__name__}: {exc}")
                else:
                    took = time.perf_counter() - t0
                    ok = isinstance(record, dict) and "error" not in record
                    same = None
                    if ok:
                        key = comparable(record)
                        with ref_lock:
                            if qi not in ref and reference is None:
                                ref[qi] = key
                            same = ref.get(qi) == key if qi in ref else None
                    s = Sample(
                        n,
                        qi,
                        took,
                        ok,
                        same,
                        record.get("latency_ms") if ok else None,
                        None if ok else str(record)[:200],
                    )
                s.end = time.perf_counter()
                with samples_lock:
                    phase.samples.append(s)
        except Exception as exc:
            with samples_lock:
                phase.client_errors.append(f"client {n}: {type(exc).__name__}: {exc}")
        finally:
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()

    threads = [threading.Thread(target=worker, args=(n,), daemon=True, name=f"{name}-{n}") for n in range(clients)]
    for t in threads:
        t.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        phase.client_errors.append("clients did not connect in time")
        go()
    t0 = times["start"]
    for t in threads:
        t.join(timeout=max(0.0, t0 + seconds + request_timeout + 30 - time.perf_counter()))
    # wall time up to the end of the last request (closing the clients is not counted)
    phase.wall_s = max((s.end for s in phase.samples), default=time.perf_counter()) - t0
    hung = [t.name for t in threads if t.is_alive()]
    if hung:
        phase.client_errors.append(f"hung clients: {', '.join(hung)}")
    return phase, ref


# --------------------------------------------------------------------------- report


def print_table(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    def ms(v):
        return "–" if v is None else f"{v:.0f}"

    table = Table(
        title=f"citeqa serve under load ({report['seconds']:.0f} s per phase, "
        f"{report['questions']} questions, commit {report['machine']['commit'][:7] or 'unknown'})"
    )
    for col in (
        "phase",
        "clients",
        "requests",
        "errors",
        "answers/s",
        "p50 ms",
        "p95 ms",
        "max ms",
        "server p50 ms",
        "identical to serial",
    ):
        table.add_column(col, justify="left" if col == "phase" else "right")
    for key in ("serial", "load"):
        s = report[key]
        table.add_row(
            key,
            str(s["clients"]),
            str(s["requests"]),
            str(s["errors"]),
            f"{s['throughput_per_s']:.2f}" if s["throughput_per_s"] is not None else "–",
            ms(s["latency_ms"]["p50"]),
            ms(s["latency_ms"]["p95"]),
            ms(s["latency_ms"]["max"]),
            ms(s["server_p50_ms"]),
            f"{'yes' if s['identical_to_serial'] else 'NO'} ({s['mismatches']}/{s['compared']} differ)",
        )
    Console(width=max(150, Console().width)).print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=None, help="index to reuse or build (default: a temp one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus for a new index (default: corpus/)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each phase")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "load.json")
    parser.add_argument("--max-requests", type=int, default=10_000, help="per client and phase")
    parser.add_argument("--request-timeout", type=float, default=120.0)
    parser.add_argument("--start-timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    if args.clients < 1 or args.seconds <= 0 or args.max_requests < 1:
        parser.error("--clients, --seconds and --max-requests must be positive")
    for key, value in LOCAL_ENV.items():
        os.environ.setdefault(key, value)

    items = load_questions()
    questions = [q["question"] for q in items]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    serve_log = args.out.with_suffix(".serve.log")
    report: dict = {
        "command": "python bench/load.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        "clients": args.clients,
        "seconds": args.seconds,
        "questions": len(questions),
        "server_concurrency_limit": 4,
    }
    with tempfile.TemporaryDirectory(prefix="citeqa-load-") as tmp:
        index = args.index or Path(tmp) / "index"
        report["index"] = {
            "path": str(args.index) if args.index else "(temporary, over corpus/)",
            **ensure_index(index, args.corpus, args.out.with_suffix(".index.log")),
        }
        print(f"index ready ({'built' if report['index']['built'] else 'reused'}); starting citeqa serve …", flush=True)
        server = Server(index, args.corpus, serve_log)
        try:
            report["start"] = server.wait_ready(questions[0], args.start_timeout)
            print(
                f"serving on {server.url} after {report['start']['first_answer_s']:.1f} s; "
                f"serial baseline for {args.seconds:.0f} s …",
                flush=True,
            )
            serial, reference = run_phase(
                "serial", server.url, questions, 1, args.seconds, args.max_requests, args.request_timeout, None
            )
            filled = complete_reference(server.url, questions, reference, args.request_timeout)
            if filled:
                report["reference_filled"] = filled
            print(f"{args.clients} clients for {args.seconds:.0f} s …", flush=True)
            load, _ = run_phase(
                "load",
                server.url,
                questions,
                args.clients,
                args.seconds,
                args.max_requests,
                args.request_timeout,
                reference,
            )
            report["serve_vm_hwm_mb"] = vm_hwm_mb(server.proc.pid)
        finally:
            server.stop()
    report["serial"] = summarize(serial)
    report["load"] = summarize(load)
    s, lo = report["serial"], report["load"]
    if s["throughput_per_s"] and lo["throughput_per_s"]:
        report["speedup"] = lo["throughput_per_s"] / s["throughput_per_s"]
    report["machine"]["loadavg_end"] = os.getloadavg()
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print_table(report)
    print(f"wrote {args.out} (server log: {serve_log})")
    ok = lo["errors"] == 0 and s["errors"] == 0 and lo["identical_to_serial"] and s["identical_to_serial"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
