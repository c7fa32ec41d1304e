"""The ``citeqa`` command: its subcommands (:mod:`~citeqa.app.cli.commands`), their arguments
(:mod:`~citeqa.app.cli.args`) and the terminal output of answers and checks
(:mod:`~citeqa.app.cli.render`). Importing it loads neither Gradio nor the web app."""

from citeqa.app.cli.commands import main

__all__ = ["main"]
