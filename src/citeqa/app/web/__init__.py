"""The web app (``citeqa serve``, the ``web`` extra): the Gradio page with its Chat, Corpus and
Evaluate tabs (:mod:`~citeqa.app.web.ui`, :mod:`~citeqa.app.web.chat`, :mod:`~citeqa.app.web.corpus`,
:mod:`~citeqa.app.web.evaluate`), the ``/ask`` and ``/check`` API (:mod:`~citeqa.app.web.api`), the
request guard in front of it all (:mod:`~citeqa.app.web.guard`) and the server that runs it
(:mod:`~citeqa.app.web.lifecycle`, :mod:`~citeqa.app.web.server`, :mod:`~citeqa.app.web.serving`)."""
