"""The allocator setting that keeps freed memory for the next batch (glibc), and its off switch."""

from __future__ import annotations

import platform
import sys

import pytest

from core.engine import memory


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's"
)
def test_glibc_keeps_freed_memory_unless_turned_off(monkeypatch):
    monkeypatch.delenv("LEAKLENS_KEEP_FREED_MEMORY", raising=False)
    assert memory._tune() is True
    monkeypatch.setenv("LEAKLENS_KEEP_FREED_MEMORY", "0")
    assert memory._tune() is False
