"""The API reference: pdoc renders the public API (what ``make docs`` writes to docs/api/) without a warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_pdoc_renders_the_public_api(repo: Path, tmp_path: Path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pdoc",
            "--docformat",
            "restructuredtext",
            "--output-directory",
            str(tmp_path),
            "citeqa",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(repo / "src")},
        timeout=300,
    )
    assert out.returncode == 0 and out.stderr == "", out.stderr
    page = (tmp_path / "citeqa.html").read_text(encoding="utf-8")
    for name in ("Engine.open", "AnswerSettings.with_overrides", "Answer.answer_span", "ClaimCheck", "IndexReport"):
        assert f'id="{name}"' in page, name
    assert "ChunkerSettings" in page and (tmp_path / "index.html").is_file()
