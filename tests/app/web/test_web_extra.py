"""The web app is an extra (``citeqa[web]``): the library and ``citeqa index/ask/check/eval`` import
none of its packages and run without them; ``citeqa serve`` without them says to install it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO

SRC = REPO / "src"

#: The web extra's own packages and the server libraries Gradio brings (pydantic, the extra's third,
#: is also what langchain-text-splitters, a core dependency, is built on: installed either way).
WEB = ("gradio", "itsdangerous", "fastapi", "starlette", "uvicorn")

#: Makes the web packages impossible to import in the child, as if the extra were not installed
#: (``import gradio`` fails and ``importlib.util.find_spec("gradio")`` is None).
BLOCK = f"import sys\nsys.modules.update(dict.fromkeys({WEB!r}))\n"


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    env["GRADIO_TEMP_DIR"] = str(cwd / "uploads")
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False
    )


def test_the_core_imports_no_web_package(tmp_path: Path):
    modules = "citeqa, citeqa.engine, citeqa.app.cli, citeqa.corpus.add, citeqa.corpus.remove"
    code = f"import sys, {modules}\nprint([m for m in {WEB!r} if m in sys.modules])"
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_index_and_ask_run_without_the_web_extra(fixture_corpus: Path, tmp_path: Path):
    index = tmp_path / "idx"
    code = BLOCK + (
        "from citeqa.app.cli import main\n"
        "from citeqa.embedding.keyword import KeywordEmbedder\n"
        "factory = lambda model: KeywordEmbedder()\n"
        f"assert main(['index', '--corpus', {str(fixture_corpus)!r}, '--index', {str(index)!r}], factory) == 0\n"
        f"code = main(['ask', '--index', {str(index)!r}, '--json', 'When was the windmill built?'], factory)\n"
        f"assert not [m for m in {WEB!r} if sys.modules[m] is not None]\n"
        "raise SystemExit(code)\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout[done.stdout.index("{") :])
    assert "1760" in record["answer"]


def test_serve_without_the_web_extra_says_to_install_it(built_index: Path, tmp_path: Path):
    code = (
        BLOCK + f"from citeqa.app.cli import main\nraise SystemExit(main(['serve', '--index', {str(built_index)!r}]))"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 2
    err = done.stderr.strip()
    assert "\n" not in err, err
    assert err.startswith("citeqa: error: citeqa serve needs the web extra") and "pip install 'citeqa[web]'" in err
