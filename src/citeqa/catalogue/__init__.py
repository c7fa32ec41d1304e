"""The interface strings, one JSON file per language (see :mod:`citeqa.messages`)."""
