"""Which kind of text a passage is, so it is compared with freshly written text of its own kind.

Loss depends on the kind of text as much as on familiarity: code and non-English text read very differently
from English prose to a mostly-English model. The fresh calibration passages are labelled by form; a pasted
passage's form is guessed here from plain signals, and the placement compares it with fresh passages of the
same group when there are enough of them. The guess needs to be right only for text that clearly is code,
a script, or another language; everything else is English prose, the bulk of the fresh set.
"""

from __future__ import annotations

import re
from functools import lru_cache

PROSE = "prose"
DIALOGUE = "dialogue"
CODE = "code"
NON_ENGLISH = "non-english"
NUMBERS = "numbers"
GROUPS: tuple[str, ...] = (PROSE, DIALOGUE, CODE, NON_ENGLISH, NUMBERS)
FORM_GROUP = {
    "narrative": PROSE,
    "news": PROSE,
    "technical": PROSE,
    "instructions": PROSE,
    DIALOGUE: DIALOGUE,
    CODE: CODE,
    NON_ENGLISH: NON_ENGLISH,
}
"""Calibration forms (``assets/calibration/README.md``) by the group a passage is compared within."""
GROUP_NAMES = {
    PROSE: "English prose",
    DIALOGUE: "dialogue",
    CODE: "code",
    NON_ENGLISH: "non-English text",
    NUMBERS: "a table or list of numbers",
}
NUMBER_SHARE = 0.4
"""Share of a passage's non-space characters that are digits from which it reads as numbers (a table, a data dump):
no freshly written passage is of that kind (the most numeric, a weather bulletin, stays under 0.25), so such a
passage has nothing of its kind to be compared with."""

_TIMESTAMP = re.compile(r"\[\d{1,2}:\d{2}(?::\d{2})?\]")
_SPEAKER = re.compile(r"^\s*[\w][\w .'()-]{0,30}:\s+\S")
_CODE_SYMBOLS = frozenset("(){}[]=;<>_#$/\\|*+`")
CODE_SYMBOL_SHARE = 0.025
"""Share of characters that are code punctuation above which a passage reads as code (English prose of the
calibration set stays under 0.02, code starts at 0.03; chat timestamps are not counted)."""
_ENGLISH_WORDS = frozenset(
    "the of and to a in is that it for was on with as be by at this are from or an have not but which they "
    "had his her were their has been one all we you there when would will can more what so if who no".split()
)


def group_of_form(form: str) -> str | None:
    """The comparison group of a calibration form (None: an unlabelled or unknown form)."""
    return FORM_GROUP.get(form.strip().lower()) if form else None


@lru_cache(maxsize=4096)
def guess_group(text: str) -> str:
    """The comparison group of a passage: numbers, code, non-English text, dialogue (speaker lines), else English prose.

    Kept per text: every inspection places its passage among the same fresh passages, and reading each
    one's group again cost about half a second of a 2-core CPU per Inspect click."""
    plain = _TIMESTAMP.sub("", text)
    visible = [c for c in plain if not c.isspace()]
    if visible and sum(c.isdigit() for c in visible) / len(visible) >= NUMBER_SHARE:
        return NUMBERS
    if plain and sum(c in _CODE_SYMBOLS for c in plain) / len(plain) >= CODE_SYMBOL_SHARE:
        return CODE
    letters = [c for c in plain if c.isalpha()]
    words = re.findall(r"[^\W\d_]+", plain.lower())
    if letters and words:
        non_ascii = sum(not c.isascii() for c in letters) / len(letters)
        english = sum(w in _ENGLISH_WORDS for w in words) / len(words)
        if non_ascii > 0.3 or (len(words) >= 8 and english < 0.08):
            return NON_ENGLISH
    lines = [line for line in plain.splitlines() if line.strip()]
    speakers = sum(1 for line in lines if _SPEAKER.match(line))
    if speakers >= 2 and speakers * 2 >= len(lines):
        return DIALOGUE
    return PROSE
