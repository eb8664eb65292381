"""Exceptions with messages a user can act on.

Every error raised on bad input or an unavailable resource derives from ``LeakLensError`` so the CLI and
the pages can show its message instead of a traceback.
"""


class LeakLensError(Exception):
    """Base class: the message is written for the person using the tool."""


class ModelLoadError(LeakLensError):
    """A model spec could not be resolved or loaded."""


class InputTextError(LeakLensError, ValueError):
    """A passage cannot be scored (empty, whitespace only, not text)."""


class DataError(LeakLensError, ValueError):
    """A dataset is missing columns, has invalid labels, or cannot be read."""


class BackendError(LeakLensError):
    """An external service (e.g. Elasticsearch) is unreachable or misbehaves."""


class OutputError(LeakLensError):
    """An output file cannot be written, or would overwrite an input of the same command."""
