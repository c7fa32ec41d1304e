"""docs/cli.md documents every option each command's --help lists (run through `main`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from citeqa.app.cli import main

COMMANDS = ("index", "ask", "check", "eval", "serve")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_of_a_command_is_in_the_cli_guide(command: str, repo: Path, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", capsys.readouterr().out)) - {"--help"}
    guide = (repo / "docs" / "cli.md").read_text(encoding="utf-8")
    section = guide.split(f"## `citeqa {command}")[1].split("\n## ")[0]
    missing = sorted(o for o in options if f"`{o}" not in section and f", {o}" not in section)
    assert options and not missing, missing
