"""``citeqa index --ray``: read, chunk and embed on Ray; the builder does everything else.

Two Ray Data pipelines serve one build (:class:`RaySteps`, the :class:`~citeqa.index.builder.BuildSteps`
of a Ray build):

* **read**: the corpus's file list (``from_items``) → ``map_batches`` tasks that read, parse
  and chunk each file with :func:`citeqa.index.builder.read_file`, the function a plain
  build calls, so documents, passages, offsets and skip reasons are the same.
* **encode**: the texts to embed (every new passage and span of the build, one call) →
  ``map_batches`` over a fixed pool of actors (:class:`EmbedWorker`); each builds its
  embedder once from a picklable factory and embeds batches of :attr:`RayOptions.batch_size`.

What changed, reuse by hash, the manifest, BM25, FAISS and the atomic write stay in
:func:`citeqa.index.builder.update_index`, in this process, so a Ray build writes the same
generation as a plain one and a failure (a worker killed, the cluster gone) raises
:class:`~citeqa.errors.RayBuildError` before anything replaces the live index. A dead
worker is not restarted: its batch is lost and the build fails, so the next run starts
again from the live index.

Ray is optional (``pip install -e '.[ray]'``) and imported only here, when a Ray build starts.
On a cluster (``auto`` or ``ray://host:port``) every node needs citeqa and the corpus
folder at the same path (workers read the files themselves).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import re
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.embedding import Embedder
from citeqa.errors import CiteqaError, ConfigError, RayBuildError
from citeqa.index.builder import CorpusRead, collect_read, read_file
from citeqa.ingest.chunking import ChunkerSettings
from citeqa.ingest.documents import corpus_entries

if TYPE_CHECKING:
    from tqdm import tqdm

RAY_HINT = "pip install -e '.[ray]'"
RAY_REQUIREMENT = "ray[data,client]==2.60.0"

#: Makes the embedder inside a worker (picklable: a module-level function, a class, a
#: ``functools.partial`` of them).
EmbedderFactory = Callable[[], Embedder]


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide a Ray build runs."""

    #: ``local``: start a Ray for this run (stopped at its end); ``auto`` or ``ray://host:port``:
    #: an existing cluster. A Ray already initialised in this process is used as it is.
    address: str = "local"
    #: Embedding workers (actors); default: the cluster's CPUs divided by :attr:`cpus_per_worker`.
    workers: int | None = None
    #: CPUs (and encoder threads) per embedding worker.
    cpus_per_worker: int = 1
    #: Texts per embedding batch (one actor call).
    batch_size: int = 64
    #: CPUs of a local Ray (default: all of this machine's).
    num_cpus: int | None = None

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--ray-workers must be at least 1, got {self.workers}")
        if self.cpus_per_worker < 1 or self.batch_size < 1:
            raise ConfigError("CPUs per worker and batch size must be at least 1")


@dataclass
class RayStats:
    """What the workers of a build reported: peak RSS (VmHWM) in MB by process id."""

    read_peak_mb: dict[int, float] = field(default_factory=dict)
    embed_peak_mb: dict[int, float] = field(default_factory=dict)
    read_seconds: float = 0.0
    encode_seconds: float = 0.0


def import_ray() -> Any:
    """The ``ray`` module, or :class:`RayBuildError` saying how to install it."""
    try:
        import ray
        import ray.data  # ray[data] brings pyarrow and pandas with it
    except ImportError as exc:
        raise RayBuildError(
            f"--ray needs Ray, which is not installed ({exc.name or 'ray'} is missing); "
            f"install it with `{RAY_HINT}` ({RAY_REQUIREMENT})"
        ) from None
    return ray


@contextlib.contextmanager
def ray_steps(
    factory: EmbedderFactory, options: RayOptions | None = None, progress: bool = False
) -> Iterator[RaySteps]:
    """:class:`RaySteps` on the Ray of ``options.address``, connected (or started) for the block."""
    options = options if options is not None else RayOptions()
    ray = import_ray()
    _quiet_ray_logs()
    started = False
    if not ray.is_initialized():
        kwargs = dict(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
        try:
            if options.address == "local":
                with _citeqa_on_path():
                    ray.init(address="local", num_cpus=options.num_cpus, **kwargs)
            else:
                with warnings.catch_warnings():  # a timeout also warns; the error below says it in one line
                    warnings.simplefilter("ignore")
                    ray.init(address=options.address, **kwargs)
        except Exception as exc:  # ConnectionError, RuntimeError, ValueError: all one line for the user
            raise RayBuildError(f"cannot start or reach Ray at {options.address!r} ({_summary(exc)})") from None
        started = True
    try:
        yield RaySteps(ray, factory, options, progress)
    finally:
        if started:
            ray.shutdown()


class RaySteps:
    """Reading, chunking and embedding as Ray Data pipelines (see the module's docstring)."""

    def __init__(self, ray: Any, factory: EmbedderFactory, options: RayOptions, progress: bool = False) -> None:
        self.ray = ray
        self.factory = factory
        self.options = options
        self.progress = progress
        self.stats = RayStats()
        cpus = int(ray.cluster_resources().get("CPU", 0))
        self.cpus = cpus
        self.workers = options.workers if options.workers is not None else max(1, cpus // options.cpus_per_worker)
        if self.workers * options.cpus_per_worker > cpus:
            raise RayBuildError(
                f"{self.workers} Ray workers of {options.cpus_per_worker} CPU need "
                f"{self.workers * options.cpus_per_worker} CPUs; the cluster has {cpus}"
            )

    def read(self, corpus: Path, settings: ChunkerSettings, indexed: Mapping[str, str]) -> CorpusRead:
        started = time.perf_counter()
        items = []
        for order, (path, unconfirmed) in enumerate(corpus_entries(corpus)):
            doc_id = path.relative_to(corpus).as_posix()
            items.append(
                {
                    "order": order,
                    "path": os.fsencode(path),
                    "unconfirmed": unconfirmed,
                    "indexed": indexed.get(doc_id, ""),
                }
            )
        if not items:
            return collect_read([])
        data = self.ray.data.from_items(items, override_num_blocks=min(len(items), 4 * max(1, self.cpus)))
        reader = _ReadFiles(os.fsencode(corpus), settings)
        results: dict[int, bytes] = {}
        with self._failures("reading the corpus"):
            mapped = data.map_batches(reader, batch_format="numpy", num_cpus=1)
            for batch in mapped.iter_batches(batch_size=None, batch_format="numpy"):
                results.update(zip(batch["order"].tolist(), batch["result"]))
                _note_peaks(self.stats.read_peak_mb, batch)
        if len(results) != len(items):
            raise RayBuildError(f"the Ray read returned {len(results)} of {len(items)} files")
        self.stats.read_seconds += time.perf_counter() - started
        return collect_read(pickle.loads(results[i]) for i in range(len(items)))

    def encode(self, texts: list[str]) -> np.ndarray:
        started = time.perf_counter()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        # Ray Data merges blocks into batches of ``size``: a small build gets smaller batches so
        # that every worker has some.
        size = max(1, min(self.options.batch_size, -(-len(texts) // self.workers)))
        blocks = min(-(-len(texts) // size), 10_000)
        # Batches of similar length: an encoder that pads a batch to its longest text wastes
        # less (the plain build's encoder sorts the whole list the same way).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        data = self.ray.data.from_items([{"i": i, "text": texts[i]} for i in order], override_num_blocks=blocks)
        out: np.ndarray | None = None
        done = np.zeros(len(texts), dtype=bool)
        bar = _bar(len(texts)) if self.progress else None
        try:
            with self._failures("embedding"), warnings.catch_warnings():
                # max_restarts has no named parameter in Ray 2.60: ray_remote_args is the way, deprecated or not
                warnings.filterwarnings("ignore", message=".*ray_remote_args.*")
                threads = str(self.options.cpus_per_worker)
                mapped = data.map_batches(
                    EmbedWorker,
                    fn_constructor_kwargs={"factory": self.factory},
                    compute=self.ray.data.ActorPoolStrategy(size=min(self.workers, blocks)),
                    batch_size=size,
                    batch_format="numpy",
                    num_cpus=self.options.cpus_per_worker,
                    max_restarts=0,
                    max_task_retries=0,
                    # The encoders size their thread pools from these when they load (OpenMP, ONNX Runtime):
                    # the workers' processes start with them, as a process started by hand would.
                    runtime_env={"env_vars": {"OMP_NUM_THREADS": threads, "CITEQA_THREADS": threads}},
                )
                for batch in mapped.iter_batches(batch_size=None, batch_format="numpy"):
                    vectors = np.asarray(batch["vector"], dtype=np.float32)
                    if out is None:
                        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                    out[batch["i"]] = vectors
                    done[batch["i"]] = True
                    _note_peaks(self.stats.embed_peak_mb, batch)
                    if bar is not None:
                        bar.update(len(vectors))
        finally:
            if bar is not None:
                bar.close()
        if out is None or not done.all():
            raise RayBuildError(f"the Ray workers returned {int(done.sum())} of {len(texts)} vectors")
        self.stats.encode_seconds += time.perf_counter() - started
        return out

    @contextlib.contextmanager
    def _failures(self, stage: str) -> Iterator[None]:
        """Any failure of a Ray pipeline as one line naming the stage."""
        try:
            yield
        except Exception as exc:
            from_worker = isinstance(exc, self.ray.exceptions.RayError)
            if isinstance(exc, CiteqaError) and not from_worker:
                raise  # this process's own check
            cause = _citeqa_message(exc) or _summary(exc)
            raise RayBuildError(f"the Ray build failed while {stage} ({cause}); the index was not changed") from None


class _ReadFiles:
    """The read pipeline's function: files → pickled :data:`~citeqa.index.builder.FileRead` results."""

    def __init__(self, corpus: bytes, settings: ChunkerSettings) -> None:
        self.corpus = corpus  # paths travel as bytes: a file name need not be valid UTF-8
        self.settings = settings

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        corpus = Path(os.fsdecode(self.corpus))
        results = [
            pickle.dumps(
                read_file(
                    corpus, Path(os.fsdecode(bytes(path))), bool(unconfirmed), self.settings, str(indexed) or None
                )
            )
            for path, unconfirmed, indexed in zip(batch["path"], batch["unconfirmed"], batch["indexed"])
        ]
        return {"order": batch["order"], "result": np.array(results, dtype=object), **_peak_columns(len(results))}


class EmbedWorker:
    """One embedding actor: builds its embedder once, then embeds batch after batch."""

    def __init__(self, factory: EmbedderFactory) -> None:
        self.embedder = factory()
        warm_up = getattr(self.embedder, "warm_up", None)
        if warm_up is not None:
            warm_up()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        texts = [str(t) for t in batch["text"]]
        vectors = np.asarray(self.embedder.encode(texts), dtype=np.float32)
        return {"i": batch["i"], "vector": vectors, **_peak_columns(len(texts))}


def _peak_columns(rows: int) -> dict[str, np.ndarray]:
    """This process's id and peak RSS (MB), one value per output row."""
    return {"pid": np.full(rows, os.getpid(), dtype=np.int64), "peak_mb": np.full(rows, peak_rss_mb())}


def peak_rss_mb(pid: int | str = "self") -> float:
    """Peak resident memory (VmHWM) of a process in MB; 0.0 where /proc does not tell."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _note_peaks(peaks: dict[int, float], batch: dict[str, np.ndarray]) -> None:
    for pid, peak in zip(batch["pid"].tolist(), batch["peak_mb"].tolist()):
        peaks[pid] = max(peaks.get(pid, 0.0), peak)


def _citeqa_message(exc: BaseException) -> str | None:
    """The message of a citeqa error raised in a worker (say, a model that cannot load), if any.

    Ray hands a worker's exception back wrapped (a task error whose ``cause`` is the original),
    or, when an actor's constructor raised, only as text inside an ActorDiedError.
    """
    from ray.exceptions import RayError

    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    found = None
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen or not isinstance(current, BaseException):
            continue
        seen.add(id(current))
        if isinstance(current, CiteqaError) and not isinstance(current, RayError) and str(current).strip():
            found = str(current).strip().splitlines()[0]
        stack.extend([current.__cause__, current.__context__, getattr(current, "cause", None)])
    if found is None:
        named = re.findall(r"citeqa\.errors\.\w+: (.+)", str(exc))
        found = named[-1].strip() if named else None
    return found


def _summary(exc: BaseException, limit: int = 240) -> str:
    """The first meaningful line of an exception, cut to ``limit`` characters."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextlib.contextmanager
def _citeqa_on_path() -> Iterator[None]:
    """PYTHONPATH led by this process's citeqa while a local Ray starts: its workers inherit
    it, so they run the same code as the builder (not another installed copy)."""
    import citeqa

    root = str(Path(citeqa.__file__).resolve().parent.parent)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([root, before] if before else [root])
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def _quiet_ray_logs() -> None:
    """Ray Data announces every execution at INFO level; a build shows its own progress instead."""
    for name in ("ray", "ray.data"):  # failures reach the user as one RayBuildError line
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with contextlib.suppress(Exception):
        from ray.data import DataContext

        context = DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False


def _bar(total: int) -> tqdm[Any]:
    from tqdm import tqdm

    return tqdm(total=total, desc="Embedding", unit="passage")
