"""Changes to the corpus folder and its index: adding checked files (:mod:`citeqa.corpus.add`) and
removing indexed ones (:mod:`citeqa.corpus.remove`), each with an incremental update of the index.

:class:`citeqa.engine.Engine` calls them (``Engine.add``, ``.remove``, ``.settle_removals``); the
CLI and the web app reach them only through the engine.
"""
