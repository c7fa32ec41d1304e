"""citeqa: extractive, cited question answering over a local document collection.

Importing the package is cheap: models, indexes and UI libraries load only when used.
"""

__version__ = "0.1.0"
