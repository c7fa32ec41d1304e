"""The Corpus tab: its Gradio wiring (:mod:`~citeqa.app.web.corpus.tab`) and its HTML and table
(:mod:`~citeqa.app.web.corpus.view`)."""
