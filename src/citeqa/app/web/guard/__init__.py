"""The ASGI guard in front of the Gradio app (:mod:`~citeqa.app.web.guard.middleware`), its rules
(:mod:`~citeqa.app.web.guard.rules`) and the ledger of uploaded files it checks requests against
(:mod:`~citeqa.app.web.guard.ledger`)."""
