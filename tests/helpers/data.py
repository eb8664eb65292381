"""Both columns of a labelled table in one call (production detects each only when it was not given)."""

from __future__ import annotations

from core.data.labelled import detect_label_column, detect_text_column


def detect_columns(columns: list[str]) -> tuple[str, str]:
    """(text column, label column) for the known formats and common names; DataError when unsure."""
    return detect_text_column(columns), detect_label_column(columns)
