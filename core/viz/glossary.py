"""Plain explanations of LeakLens's terms, shown on hover wherever a number line uses them.

One glossary for every page, report and banner: ``GLOSSARY`` maps a term to one plain sentence, ``FORMS``
lists how each term is spelled in the text (``Min-20%`` is a Min-K%, ``95% CI`` an interval, ``p = 0.003`` a
p-value), and ``gloss_html`` escapes a line of text and wraps every known term in
``<abbr class="leaklens-term" title="...">``. Headlines stay free of these terms (``tests/viz/test_jargon.py``);
the numbers line under them may use any term listed here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

GLOSSARY: dict[str, str] = {
    "AUROC": "How well a score tells two sets apart: 0.5 is guessing, 1.0 separates them perfectly (the chance "
    "that a random text of one set scores above a random text of the other).",
    "95% interval": "The range the true value very likely lies in, given how many items were measured (a 95% "
    "confidence interval, CI); more items make it narrower.",
    "Δ": "Loss delta: the model's average loss on the benchmark minus its loss on the reference set; below zero "
    "means the benchmark is easier (more predictable) for the model.",
    "Δ²": "Δ of the fine-tuned model minus Δ of its base model: below zero means fine-tuning made the benchmark "
    "easier for the model than the reference set.",
    "nats": "The unit of loss (surprise measured with natural logarithms); 0.05 nats per token is about a 5% "
    "change in perplexity.",
    "p-value": "How often a difference at least this large would turn up by chance alone if there were no real "
    "effect; below 0.05, chance is an unlikely explanation.",
    "Cohen's d": "The difference between two averages in units of their spread: 0.2 is small, 0.5 medium, 0.8 large.",
    "confounded": "Something other than the model, such as the wording of the texts, explains the result, so it "
    "cannot show what the model saw.",
    "calibration": "Texts whose status is known (freshly written, or known members and non-members), scored by "
    "the same model so that a single score has something to be compared with.",
    "blind baseline": "A classifier that reads only the words of the texts, never the model: if it separates the "
    "sets as well as the detectors, the way the sets were drawn explains the result.",
    "perplexity": "How surprised the model is by a text, per token on average: lower means more predictable "
    "(the exponential of the loss).",
    "loss": "The model's average surprise per token (minus the log-probability it gave each token); lower means "
    "the text is more predictable to the model.",
    "Min-K%": "The average log-probability of a text's K% least likely tokens: memorised text has few very "
    "unlikely tokens.",
    "Min-K%++": "Min-K% with each token's log-probability compared with what the model expected at that point "
    "(the mean and spread of its next-token distribution).",
    "TPR@FPR": "True positive rate at a fixed false positive rate: the share of members caught when only, say, "
    "1% of non-members are wrongly flagged.",
    "zlib": "Loss divided by how well the text compresses (with zlib): it discounts text that is predictable "
    "only because it repeats itself.",
    "slope": "Probability slope: how the model's confidence changes along the text, a straight line fitted over "
    "the token positions.",
    "member": "A text that was (or is claimed to be) in the model's training data.",
    "non-member": "A text that was not in the model's training data.",
    "bootstrap": "Recomputing a number on many random resamples of the items to see how much it varies: the "
    "source of the 95% intervals.",
    "no-effect margin": 'The size below which an effect is too small to matter: "no sign" needs the whole 95% '
    "interval inside it.",
    "percentile": "The share of the compared texts that this one scores above.",
    "t-test": "Whether an average difference lies above zero, judged against how much the differences vary: here, "
    "whether the published order is likelier than shuffles of it across the shards.",
    "sign test": "Counts the shards where the published order beats the average shuffle; a model without a "
    "preference would win about half.",
    "Holm correction": "Running several tests gives chance several tries: Holm's correction raises each test's bar "
    "so that a model which never saw the benchmark reads evidence in any of them at most 5% of the time.",
    "family-wise level": "The most often, across all the tests of an audit together, that chance alone may read as "
    "evidence (5%).",
}

FORMS: tuple[tuple[str, str], ...] = (
    # (regular expression for one spelling, glossary term); at one position the first that matches wins,
    # so longer and more specific spellings come first.
    (r"Min-(?:K|\d+(?:\.\d+)?)%\+\+", "Min-K%++"),
    (r"Min-(?:K|\d+(?:\.\d+)?)%", "Min-K%"),
    (r"TPR ?(?:@|at) ?(?:\d+(?:\.\d+)?% ?)?FPR", "TPR@FPR"),
    (r"TPR", "TPR@FPR"),
    (r"FPR", "TPR@FPR"),
    (r"95% (?:CI|interval)", "95% interval"),
    (r"(?i:confidence intervals?)", "95% interval"),
    (r"CI", "95% interval"),
    (r"(?i:intervals?)", "95% interval"),
    (r"(?i:p-values?)", "p-value"),
    (r"p(?= ?[=<>≤])", "p-value"),
    (r"Cohen['’]s d", "Cohen's d"),
    (r"Δ²", "Δ²"),
    (r"Δ", "Δ"),
    (r"(?i:nats?)", "nats"),
    (r"(?i:confound(?:ed|ing|s)?)", "confounded"),
    (r"(?i:calibration)", "calibration"),
    (r"(?i:blind baseline)", "blind baseline"),
    (r"(?i:perplexity)", "perplexity"),
    (r"(?i:loss)", "loss"),
    (r"(?i:zlib)", "zlib"),
    (r"(?i:slopes?)", "slope"),
    (r"(?i:non-members?)", "non-member"),
    (r"(?i:members?)", "member"),
    (r"(?i:bootstrap(?:ped)?)", "bootstrap"),
    (r"AUROC", "AUROC"),
    (r"(?i:no-effect margin)", "no-effect margin"),
    (r"(?i:percentiles?)", "percentile"),
    (r"(?i:t-tests?)", "t-test"),
    (r"(?i:sign tests?)", "sign test"),
    (r"(?i:Holm(?:'s)? correction)", "Holm correction"),
    (r"(?i:after Holm)", "Holm correction"),
    (r"(?i:family-wise level)", "family-wise level"),
)

_PATTERN = re.compile("|".join(f"(?P<t{i}>(?<![\\w-]){form}(?![\\w]))" for i, (form, _) in enumerate(FORMS)))


def terms_in(text: str) -> Iterator[tuple[re.Match[str], str]]:
    """Every glossed term in ``text``, left to right, as (its match, its glossary term); none overlap."""
    for match in _PATTERN.finditer(text):
        yield match, FORMS[int((match.lastgroup or "t0")[1:])][1]


def gloss_html(text: str) -> str:
    """``text`` HTML-escaped, each known term wrapped in ``<abbr class="leaklens-term" title="...">``."""
    parts, at = [], 0
    for match, term in terms_in(text):
        parts.append(html.escape(text[at : match.start()]))
        parts.append(
            f'<abbr class="leaklens-term" title="{html.escape(GLOSSARY[term])}">{html.escape(match.group())}</abbr>'
        )
        at = match.end()
    parts.append(html.escape(text[at:]))
    return "".join(parts)
