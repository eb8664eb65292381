"""Checks that a passage is text a tokenizer can take, with messages naming the input and the bad byte.

Python keeps bytes that are not UTF-8 (in a command-line argument, on stdin, in JSON ``\\udcxx``
escapes) as lone surrogates; a tokenizer then fails with an unrelated ``TypeError``. Every passage from
a user is checked here first, so the error says which input and which byte.
"""

from __future__ import annotations

import re

from core.errors import InputTextError

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTES = range(0xDC80, 0xDD00)
"""Python's ``surrogateescape`` keeps an undecodable byte 0xNN as the code point U+DCNN."""


def decode_utf8(data: bytes, name: str, fix: str = "Save it as UTF-8 and try again.") -> str:
    """``data`` as text (a leading BOM dropped); ``InputTextError`` naming ``name`` and the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputTextError(
            f"{name} is not UTF-8 text (byte {exc.start} is invalid): 0x{data[exc.start]:02x}. {fix}"
        ) from exc


def check_unicode(text: str, name: str, fix: str = "Pass UTF-8 text.") -> str:
    """``text`` unchanged when every character is real text; else ``InputTextError`` at the first bad one."""
    problem = unicode_problem(text)
    if problem is not None:
        raise InputTextError(f"{name} {problem}. {fix}")
    return text


def unicode_problem(text: str) -> str | None:
    """Why ``text`` is not valid Unicode text (e.g. ``is not UTF-8 text (byte 3 is invalid): 0xe9``), or None."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    code = ord(found.group())
    if code in _ESCAPED_BYTES:
        offset = len(text[: found.start()].encode("utf-8", "surrogateescape"))
        return f"is not UTF-8 text (byte {offset} is invalid): 0x{code - 0xDC00:02x}"
    return f"holds a lone surrogate U+{code:04X} at character {found.start()}, which is not text"
