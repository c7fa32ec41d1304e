"""What the index holds and changes to the corpus folder behind it: adding checked files
(:mod:`citeqa.corpus.add`) and removing indexed ones (:mod:`citeqa.corpus.remove`), each with an
incremental update of the index.

:class:`citeqa.corpus.service.CorpusService` is the component :class:`citeqa.engine.Engine` runs them
through (``Engine.add``, ``.remove``, ``.settle_removals``, ``.documents``); the CLI and the web app
reach them only through the engine.
"""
