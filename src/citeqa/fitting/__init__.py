"""Fitting what ships as data: every command that writes the scorer, the verifier and the reader, and
the data they are fitted on.

Each module runs as ``python -m citeqa.fitting.<name>`` (``--help`` says how) and writes its output
with how it was made (``fitted``: command, date, data, counts and figures), so every shipped figure
can be made again from the repository: :mod:`~citeqa.fitting.scorer` (the answer scorer, its
abstention level and bands; the fit itself in :mod:`~citeqa.fitting.scorer_fit`),
:mod:`~citeqa.fitting.paired` (two scorer fits compared question by question), :mod:`~citeqa.fitting.traces`,
:mod:`~citeqa.fitting.negatives` and :mod:`~citeqa.fitting.verifier` (the verifier), and
:mod:`citeqa.fitting.reader` (the reader's training). ``import citeqa`` loads none of them.
The claim rule's fits are still scripts: ``eval/fit_claims.py`` and ``eval/fit_claim_reading.py``.
"""
