"""The extraction test as a reader sees it: what the model was given, what it wrote, and what the passage says.

Two aligned rows under the end of the prompt, token by token: the passage's own continuation and the model's.
Tokens the model wrote exactly where the passage has them are marked in blue (the colour of matches across
LeakLens; red, amber and green are kept for the finding levels); the rest is plain grey. Every style is inline,
so the panel reads the same on a page and in a saved report. Passage and model text are untrusted and escaped.
"""

from __future__ import annotations

import html

from core.passage.extraction import ExtractionView

MATCH_BACKGROUND = "#cfe3f5"
MATCH_TEXT = "#0b3d66"
MISS_TEXT = "#5f6b75"
PROMPT_TAIL_WORDS = 40
"""The end of the prompt shown before the rows: enough to read the continuation in context."""


def _piece(text: str, matched: bool) -> str:
    shown = html.escape(text).replace("\n", "↵<br>")
    if matched:
        return (
            f'<span style="background:{MATCH_BACKGROUND};color:{MATCH_TEXT};border-radius:3px;'
            f'padding:0 1px">{shown}</span>'
        )
    return f'<span style="color:{MISS_TEXT}">{shown}</span>'


def _row(label: str, pieces: tuple[str, ...], matched: tuple[bool, ...]) -> str:
    body = "".join(_piece(p, m) for p, m in zip(pieces, matched, strict=False))
    return (
        '<div style="display:flex;gap:10px;margin:4px 0;align-items:baseline">'
        f'<div style="flex:0 0 150px;font-weight:600;color:#1b2630">{html.escape(label)}</div>'
        f'<div style="flex:1;white-space:pre-wrap;line-height:1.6">{body}</div></div>'
    )


def prompt_tail(prompt: str, words: int = PROMPT_TAIL_WORDS) -> str:
    """The last ``words`` words of the prompt, with an ellipsis when cut."""
    split = prompt.split()
    return prompt.strip() if len(split) <= words else "… " + " ".join(split[-words:])


def extraction_panel_html(view: ExtractionView, sentence: str) -> str:
    """The panel: the sentence, the end of the prompt, the passage's continuation and the model's, aligned."""
    legend = (
        f'<span style="background:{MATCH_BACKGROUND};color:{MATCH_TEXT};border-radius:3px;padding:0 4px">'
        "blue</span> = the model wrote exactly the passage's token there"
    )
    return (
        '<div style="font-family:system-ui,-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;'
        'font-size:14px;color:#1b2630;background:#ffffff;border:1px solid #e3e8ec;border-radius:6px;padding:10px 12px">'
        f'<div style="margin-bottom:6px">{html.escape(sentence)}</div>'
        + _row(f"Given ({view.prompt_words} words)", (prompt_tail(view.prompt),), (False,))
        + _row("The passage goes on", view.truth_pieces, view.matched)
        + _row("The model wrote", view.generated_pieces, view.matched)
        + f'<div style="margin-top:6px;font-size:12px;color:{MISS_TEXT}">{legend}</div></div>'
    )
