"""What a scoring pass produces: per-token records of one passage, whichever model source computed them.

Both sources (a model loaded in this process, ``core.engine.scoring``; a model behind a server,
``core.engine.served_scoring``) return these records, so every detector reads the same fields. A field a
source cannot compute (the full next-token distribution, through an API) holds NaN, and the detectors
that read it are left out for that source (``core.engine.capabilities``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_KGRAM = 6


@dataclass(frozen=True, eq=False)
class TokenRecords:
    """Per-token evidence for one passage; index ``i`` is the passage's ``i``-th token (start token excluded)."""

    text: str
    token_ids: np.ndarray
    """(n,) int64 token ids."""
    offsets: np.ndarray
    """(n, 2) character span of each token in ``text``."""
    logprobs: np.ndarray
    """(n,) log p(x_i | start token, x_<i)."""
    mean_logprob: np.ndarray
    """(n,) μ_i = Σ_z p(z) log p(z) over the full next-token distribution (Min-K%++)."""
    std_logprob: np.ndarray
    """(n,) σ_i = sqrt(Σ_z p(z) (log p(z) − μ_i)²)."""
    entropy: np.ndarray
    """(n,) entropy of the next-token distribution in nats (= −μ_i)."""
    rank: np.ndarray
    """(n,) 1-based rank of the actual token among all vocabulary entries (1 = most likely)."""
    kgram_logprobs: np.ndarray | None
    """(K, n) row k−1 = log p(x_i | start token + the k−1 tokens before x_i); None when not computed."""
    n_dropped: int = 0
    """Tokens cut from the end because the passage exceeded the context."""
    n_dropped_exact: bool = True
    """False when a very long passage was tokenized only as far as it could be scored: ``n_dropped`` is
    then an estimate from its characters per token (``encode_texts``)."""

    @property
    def n_tokens(self) -> int:
        return int(self.token_ids.shape[0])

    @property
    def tokens(self) -> list[str]:
        """Each token as the substring of the passage it covers."""
        return [self.text[int(s) : int(e)] for s, e in self.offsets]

    @property
    def probs(self) -> np.ndarray:
        return np.exp(self.logprobs)

    @property
    def loss(self) -> float:
        return float(-self.logprobs.mean())

    @property
    def perplexity(self) -> float:
        return float(np.exp(self.loss))

    @property
    def max_kgram(self) -> int:
        return 0 if self.kgram_logprobs is None else int(self.kgram_logprobs.shape[0])

    def kgram(self, k: int) -> np.ndarray:
        """log p(x_i | start + k−1 previous tokens) for every token; requires k ≤ ``max_kgram``."""
        if not 1 <= k <= self.max_kgram:
            raise ValueError(f"k-gram log-probs for k={k} were not computed (available: 1..{self.max_kgram}).")
        assert self.kgram_logprobs is not None
        return self.kgram_logprobs[k - 1]

    def table(self) -> list[dict[str, object]]:
        """One row per token, for display and CSV export."""
        rows = []
        tokens = self.tokens
        for i in range(self.n_tokens):
            row: dict[str, object] = {
                "position": i,
                "token": tokens[i],
                "token_id": int(self.token_ids[i]),
                "start": int(self.offsets[i, 0]),
                "end": int(self.offsets[i, 1]),
                "logprob": float(self.logprobs[i]),
                "prob": float(np.exp(self.logprobs[i])),
                "rank": int(self.rank[i]),
                "entropy": float(self.entropy[i]),
                "mu": float(self.mean_logprob[i]),
                "sigma": float(self.std_logprob[i]),
            }
            for k in range(1, self.max_kgram + 1):
                row[f"logprob_{k}gram"] = float(self.kgram(k)[i])
            rows.append(row)
        return rows


def scored_text(records: TokenRecords) -> str:
    """The part of the passage the model actually scored (all of it unless it was truncated).

    Text-level measures (zlib size, neighbour perturbations) must see exactly what the loss covers.
    """
    if records.n_dropped and records.n_tokens:
        return records.text[: int(records.offsets[-1, 1])]
    return records.text


def windows_to_grid(values: np.ndarray) -> np.ndarray:
    """(n, K) window values (row j, column m: token j+m from m previous tokens) → (K, n) k-gram log-probs."""
    n, K = values.shape
    grid = np.full((K, n), np.nan)
    js, ms = np.meshgrid(np.arange(n), np.arange(K), indexing="ij")  # token j, shift m as grids
    valid = js + ms < n
    grid[ms[valid], (js + ms)[valid]] = values[valid]
    return grid
