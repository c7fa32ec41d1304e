"""Every fitting module runs as ``python -m citeqa.fitting.<name>``, and ``import citeqa`` loads none of them."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import citeqa.fitting

#: Modules of citeqa.fitting that only serve the others (no command of their own).
HELPERS = {"citeqa.fitting.scorer_fit", "citeqa.fitting.reader.squad"}
MODULES = sorted(m.name for m in pkgutil.walk_packages(citeqa.fitting.__path__, "citeqa.fitting.") if not m.ispkg)


def test_the_commands_are_found() -> None:
    assert {"citeqa.fitting.scorer", "citeqa.fitting.verifier", "citeqa.fitting.reader.train"} <= set(MODULES)
    assert set(MODULES) >= HELPERS


@pytest.mark.parametrize("name", [m for m in MODULES if m not in HELPERS])
def test_each_command_has_a_main_and_its_help_exits_0(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(name)
    assert callable(getattr(module, "main", None)), f"{name} has no main()"
    assert 'if __name__ == "__main__":' in Path(module.__file__ or "").read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        module.main(["--help"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m {name} ")


def test_importing_citeqa_loads_no_fitting_module() -> None:
    code = "import sys, citeqa; print(sorted(m for m in sys.modules if m.startswith('citeqa.fitting')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
