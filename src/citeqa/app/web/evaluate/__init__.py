"""The Evaluate tab: its Gradio wiring (:mod:`~citeqa.app.web.evaluate.tab`), its components
(:mod:`~citeqa.app.web.evaluate.layout`), its HTML
(:mod:`~citeqa.app.web.evaluate.view`), the background run (:mod:`~citeqa.app.web.evaluate.runner`)
and the QA files it offers (:mod:`~citeqa.app.web.evaluate.files`)."""
