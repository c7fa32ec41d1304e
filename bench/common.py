"""What the bench scripts share: percentiles, this process's memory, a free port.

One definition each, so that every script's p50/p95 and MB mean the same thing (they were
written out in each script before). The percentile is the library's
(:func:`citeqa.evaluation.metrics.percentile`, the one ``citeqa eval`` reports latency with),
the free port :func:`citeqa.pg.nodes.free_port`. The scripts import this module as ``common``:
``bench/`` is on ``sys.path`` when a script of it runs. It imports citeqa only when called: a
script that times ``import citeqa...`` (bench/run.py's query worker) must not find it loaded.
"""

from __future__ import annotations

import resource
from collections.abc import Sequence
from pathlib import Path

__all__ = ["free_port", "maxrss_mb", "pct", "rss_mb", "vm_hwm_mb"]


def pct(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0.5: the median, 0.95: p95) with linear interpolation; None for no values.

    ``q`` is a fraction, as the scripts have always passed it; the library's percentile takes 0-100."""
    from citeqa.evaluation.metrics import percentile

    return percentile(values, q * 100)


def free_port() -> int:
    """A loopback TCP port nobody listens on now (the library's, which the PostgreSQL test nodes use)."""
    from citeqa.pg.nodes import free_port as library_free_port

    return library_free_port()


def rss_mb() -> float:
    """This process's resident memory now (``VmRSS``), in MB; 0.0 where ``/proc`` does not tell."""
    return _status_mb("self", "VmRSS:") or 0.0


def maxrss_mb() -> float:
    """This process's peak resident memory so far (``ru_maxrss``), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vm_hwm_mb(pid: int) -> float | None:
    """Peak resident memory (``VmHWM``) of process ``pid``, in MB; None when it cannot be read."""
    return _status_mb(str(pid), "VmHWM:")


def _status_mb(pid: str, key: str) -> float | None:
    """One ``kB`` line of ``/proc/<pid>/status``, in MB; None when the file or the line is missing."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    return next((int(line.split()[1]) / 1024 for line in lines if line.startswith(key)), None)
