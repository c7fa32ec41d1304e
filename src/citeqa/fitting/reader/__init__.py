"""Training the reader (the span model shipped as ``citeqa/reader/weights/``), as the model card runs it.

``python -m citeqa.fitting.reader.<name>``: :mod:`~.prepare` (the training data), :mod:`~.train`,
:mod:`~.average` (checkpoint averaging), :mod:`~.export` (the shipped int8 delta), :mod:`~.evaluate`
(its figures, written into the model's metadata file), :mod:`~.export_check` (ONNX recipes),
:mod:`~.curve` (the learning curve) and :mod:`~.milestone` (a candidate measured end to end).
They need only the base install (torch, transformers and onnx are core dependencies).
"""
