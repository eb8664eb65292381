"""Dataset-inference shortcuts only the tests use."""

from __future__ import annotations

from core.dataset_inference.run import QUICK_METHOD_KEYS
from core.methods import Method, parse_methods


def quick_methods() -> list[Method]:
    """The Dataset inference page's default detector set (``QUICK_METHOD_KEYS``)."""
    return parse_methods(list(QUICK_METHOD_KEYS))
