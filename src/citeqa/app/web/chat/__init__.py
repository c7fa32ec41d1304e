"""The Chat tab: its Gradio wiring (:mod:`~citeqa.app.web.chat.tab`), one turn of the conversation
(:mod:`~citeqa.app.web.chat.turns`), the conversation's HTML (:mod:`~citeqa.app.web.chat.view`) and
the HTML of answers and their sources (:mod:`~citeqa.app.web.chat.answers`) and of claim checks
(:mod:`~citeqa.app.web.chat.claims`)."""
