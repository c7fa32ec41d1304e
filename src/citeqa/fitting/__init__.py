"""Fitting what ships as data: the scripts that write the verifier, and the data they are fitted on.

Each module runs as ``python -m citeqa.fitting.<name>`` and writes its output with how it was
made (command, sources, counts), so every shipped figure can be made again from the repository.
"""
