"""``python -m citeqa.app.cli``: the ``citeqa`` command."""

from citeqa.app.cli.commands import main

raise SystemExit(main())
