"""What every detector is: a named, parameterised function from token records to a score.

Scores are oriented so that higher = more likely a member (seen in training). A method never runs the
model itself: the scoring engine produces the records (and any auxiliary passes) once, and every method
reads them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from core.engine.capabilities import TARGET_LOGPROBS
from core.engine.progress import ProgressCallback
from core.engine.scoring import ScoringModel, TokenRecords
from core.errors import LeakLensError


class MethodConfigError(LeakLensError, ValueError):
    """A method was asked for with invalid parameters."""


class AuxiliaryRecords:
    """The extra passes some methods compare against, one passage's worth, by pass name (``reference``: the
    passage under a reference model; ``neighbours``: reworded copies under the target; ``prefixed``: the
    passage after a non-member prefix; a new detector may bring its own). Each is computed once per method
    set by the method that ``provides`` it, never by the methods that read it; a pass not computed reads as
    None."""

    def __init__(self, **passes: Any) -> None:
        self._passes: dict[str, Any] = {name: value for name, value in passes.items() if value is not None}

    def get(self, name: str) -> Any:
        return self._passes.get(name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._passes.get(name)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, AuxiliaryRecords)
            and self._passes.keys() == other._passes.keys()
            and all(self._passes[k] is other._passes[k] or self._passes[k] == other._passes[k] for k in self._passes)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable contents: equal by value, not hashable

    def __repr__(self) -> str:
        return f"AuxiliaryRecords({', '.join(sorted(self._passes))})"


@dataclass(frozen=True)
class PassContext:
    """What an extra pass may read: the target model, the passages' records under it, and the token budget of a
    batch; ``reference_lm`` is the reference model the run loaded beside the target (``reference.reference_source``)."""

    lm: ScoringModel
    records: Sequence[TokenRecords]
    token_budget: int
    reference_lm: ScoringModel | None = None


PassStep = Callable[[int], ProgressCallback | None]
"""Reserves the next ``n`` units of the run's one progress bar (passage-passes) and reports into them."""


@dataclass(frozen=True)
class Method(ABC):
    """Base class. Subclasses are frozen dataclasses whose fields are the method's parameters."""

    family: ClassVar[str]
    """Registry name of the method family, e.g. ``min_k``."""
    title: ClassVar[str]
    """Short human name, e.g. ``Min-K%``."""
    description: ClassVar[str]
    """One plain-language line: what a high score means."""
    needs: ClassVar[frozenset[str]] = frozenset()
    """Extra passes this method reads (``reference``, ``neighbours``, ``prefixed``, or one it provides)."""
    provides: ClassVar[str | None] = None
    """The extra pass this method computes for every method that needs it (``compute_pass``), if any."""
    pass_title: ClassVar[str] = ""
    requires: ClassVar[frozenset[str]] = frozenset({TARGET_LOGPROBS})
    """What the model source must compute for this method (``core.engine.capabilities``)."""
    """What one configuration of that pass is called in errors ("reference model")."""

    @property
    def key(self) -> str:
        """Unique, stable id including parameters (used in tables, stores and JSON)."""
        return self.family

    @property
    def label(self) -> str:
        """Human-readable name including parameters."""
        return self.title

    @property
    def kgram_needed(self) -> int:
        """Largest k whose context-limited log-probs this method reads (0 = none)."""
        return 0

    def params(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @abstractmethod
    def score(self, records: TokenRecords, aux: AuxiliaryRecords | None = None) -> float:
        """Score one passage; higher = more likely a member."""

    def pass_cost(self) -> int:
        """Forward passes per passage of the pass this method ``provides`` (0: none)."""
        return 0

    def compute_pass(self, context: PassContext, step: PassStep) -> list[Any]:
        """The pass this method ``provides``, one value per passage of ``context.records``, batched over all of
        them; report progress through ``step`` (``pass_cost()`` × passages units in all)."""
        raise MethodConfigError(f"{self.title} computes no extra pass.")

    def _require_aux(self, aux: AuxiliaryRecords | None, name: str) -> Any:
        value = aux.get(name) if aux is not None else None
        if value is None:
            raise MethodConfigError(f"{self.title} needs the '{name}' pass, which was not computed.")
        return value
