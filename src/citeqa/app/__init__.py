"""The two front ends over :class:`citeqa.engine.Engine`: the command line (:mod:`citeqa.app.cli`)
and the web app (:mod:`citeqa.app.web`, which needs the ``web`` extra), with what both show of an
answer: its citations' bands and places (:mod:`citeqa.app.cited`) and the citation formats and
conversation exports (:mod:`citeqa.app.evidence`)."""
