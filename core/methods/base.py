"""What every detector is: a named, parameterised function from token records to a score.

Scores are oriented so that higher = more likely a member (seen in training). A method never runs the
model itself: the scoring engine produces the records (and any auxiliary passes) once, and every method
reads them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import ClassVar

from core.engine.scoring import TokenRecords
from core.errors import LeakLensError


class MethodConfigError(LeakLensError, ValueError):
    """A method was asked for with invalid parameters."""


@dataclass(frozen=True)
class AuxiliaryRecords:
    """Extra passes some methods compare against; each is scored by the engine, never by the method."""

    reference: TokenRecords | None = None
    """The same passage under a reference model (reference-model method)."""
    neighbours: tuple[TokenRecords, ...] | None = None
    """Perturbed copies of the passage under the target model (neighbourhood method)."""
    prefixed: TokenRecords | None = None
    """The passage conditioned on a non-member prefix (ReCaLL)."""


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
    """Auxiliary passes required: any of ``reference``, ``neighbours``, ``prefixed``."""

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

    def _require_aux(self, aux: AuxiliaryRecords | None, name: str):
        value = getattr(aux, name, None) if aux is not None else None
        if value is None:
            raise MethodConfigError(f"{self.title} needs the '{name}' pass, which was not computed.")
        return value
