"""Built-in passages for the Inspect page: one the model surely saw, one it cannot have seen.

They double as the reference points of the page's summary: a passage's perplexity means little alone,
but next to a famous text and a fresh one under the same model it becomes readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    kind: Literal["famous", "fresh"]
    text: str
    why: str
    """One line: why the model should (or cannot) know this text."""


GETTYSBURG = Example(
    key="gettysburg",
    title="Famous: the Gettysburg Address (1863, public domain)",
    kind="famous",
    text=(
        "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived "
        "in Liberty, and dedicated to the proposition that all men are created equal. Now we are engaged in a "
        "great civil war, testing whether that nation, or any nation so conceived and so dedicated, can long "
        "endure. We are met on a great battle-field of that war. We have come to dedicate a portion of that "
        "field, as a final resting place for those who here gave their lives that that nation might live. It "
        "is altogether fitting and proper that we should do this."
    ),
    why="Quoted countless times on the web, so nearly every language model has seen it many times.",
)

FRESH = Example(
    key="fresh",
    title="Fresh: a paragraph written for LeakLens (never published before)",
    kind="fresh",
    text=(
        "The ferry to Kessvik stopped running the week the harbour crane seized, so Ilse Marañón rebuilt "
        "its gearbox from two bicycle chains, a salvaged lawnmower engine and a coil of blue fencing wire. "
        "By Thursday the crane lifted crates again, squeaking in a rhythm the fishmonger swore matched an old "
        "waltz. The co-operative voted eleven to three to name the next herring boat after her cat, a "
        "one-eyed tabby called Admiral Pumice, who slept through the ceremony on a pile of damp nets."
    ),
    why="Written for this tool and never published, so no model can have trained on it.",
)

EXAMPLES: tuple[Example, ...] = (GETTYSBURG, FRESH)


GETTYSBURG_PARAPHRASE = Example(
    key="gettysburg_paraphrase",
    title="Paraphrase of the Gettysburg opening (same meaning, new wording)",
    kind="fresh",
    text=(
        "Eighty-seven years back, the people before us founded a new country on this land, born in freedom "
        "and committed to the idea that every person starts out equal. Today we are caught up in a vast war "
        "between ourselves, a test of whether that country, or any country founded and committed the same "
        "way, can survive for long. We have gathered on one of the great battlefields of that war. We are "
        "here to set aside part of this ground as the last home of those who died so that the country could "
        "go on. It is right and fitting that we do so."
    ),
    why="The same ideas in new words: a model that memorised the original should find this far less predictable.",
)
