"""The exceptions citeqa raises on purpose.

Everything derives from :class:`CiteqaError`, so callers (the CLI, the UI) can turn any
of them into a one-line message. Each message says what went wrong and what to do.
"""

from __future__ import annotations


class CiteqaError(Exception):
    """Base class for every error citeqa reports to a user."""


class ConfigError(CiteqaError):
    """A setting or argument has a value citeqa cannot use."""


class CorpusError(CiteqaError):
    """The corpus folder is missing or holds no readable document."""


class DocumentError(CiteqaError):
    """One file cannot be turned into a document (it is skipped, not fatal)."""


class ParseBudgetError(DocumentError):
    """Reading one file needed more than its budget (:mod:`citeqa.ingest.budget`).

    ``exceeded`` names the limit: ``memory``, ``time`` (the worker's own timer or CPU limit) or
    ``deadline`` (the worker, start-up included, did not finish at all in the time allowed).
    """

    def __init__(self, message: str, exceeded: str) -> None:
        super().__init__(message)
        self.exceeded = exceeded


class ModelError(CiteqaError):
    """The embedding model cannot be loaded."""


class ReaderError(ModelError):
    """The trained reader cannot be built or loaded (its file damaged, a package missing);
    ``--reader off`` answers without it, and ``citeqa serve`` falls back to that."""


class ScoreError(CiteqaError):
    """A score is not a number in its range (NaN, infinite, a confidence outside [0, 1]): the
    answer is refused rather than given with a meaningless confidence."""


class IndexStoreError(CiteqaError):
    """Base class for problems with the index folder."""


class IndexMissingError(IndexStoreError):
    """There is no index where one was expected."""


class IndexMismatchError(IndexStoreError):
    """The index was built with another model, dimension or format version."""


class IndexFormatError(IndexMismatchError):
    """The index was written by another version of citeqa's index format; ``citeqa index`` rebuilds it."""


class IndexCorruptError(IndexStoreError):
    """An index file is missing, truncated or does not match the manifest."""


class ShardError(IndexStoreError):
    """A PostgreSQL shard of the index cannot be reached or failed mid-request; the message names
    the shard. Nothing already published is lost: the live generation switches only when every
    shard has its part, and a restarted node serves it again."""


class QuestionTimeoutError(ShardError):
    """A question ran past its time limit (``--question-timeout``) while it waited on a shard: the
    statement was cancelled, or the client stopped waiting for a server that did not answer (and
    dropped that connection); the index is untouched and the next question is answered as usual."""


class RayBuildError(CiteqaError):
    """``citeqa index --ray`` cannot run (Ray missing, cluster unreachable) or failed (a worker
    died); nothing replaced the live index."""


class QuestionError(CiteqaError):
    """A question cannot be answered as given (empty, too long, not text)."""


class QAFileError(CiteqaError):
    """An evaluation file is malformed; the message names the line."""


class UploadError(CiteqaError):
    """An uploaded file was refused (type, size or content)."""


class UploadCancelled(UploadError):
    """The user cancelled an add before its new index was switched in: nothing of it was added."""


class RequestError(CiteqaError):
    """An argument of an API request is outside its documented schema.

    ``field`` names the argument (``question``, ``history``, ``k``, ``language``) so a
    client can tell which one to fix without reading a server log.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class ServerError(CiteqaError):
    """The web server cannot start as asked (port in use, address not available)."""
