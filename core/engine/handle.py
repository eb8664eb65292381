"""The user's model choice, resolved once into one handle that every run function takes.

A choice is a bundled name, a local checkpoint folder, a hub id, or a model behind a server. It is read and
(for a server) connected once, by the command line or the sidebar; from then on the handle answers what each
room used to work out again from a string: which weights these are (``identity``), which start token scoring
will use (``start_token``), the part of a run key that names the model (``key``), what the source can compute
(``capabilities``), and how to load it (``load``). The connection to a server lives in its handle: there is no
table of connections to look a name up in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from core.engine.capabilities import ALL_CAPABILITIES
from core.engine.model_kind import LocalKind, model_kind
from core.engine.model_source import ScoringModel
from core.engine.served import SERVED_PREFIX, ServedModel, ServedModelError
from core.engine.setup import ScoringSetup, resolve_setup
from core.errors import LeakLensError

Kind = Literal["bundled", "local", "hub", "served"]
Loader = Callable[[str], ScoringModel]
"""Loads a model by its spec (a page's cached loader, a test's model in memory): the handle's own, or a
reference or base model beside it; it is the loader's to apply the handle's start token to its own spec."""
Notice = Callable[[str], AbstractContextManager[object]]
"""What to show while a model's weights load here, given its spec (the page's spinner)."""


@dataclass(frozen=True, eq=False)
class ModelHandle:
    """One resolved model choice (see the module docstring). Build it with ``resolve_model`` or ``served_handle``."""

    spec: str
    """The name stored runs, run keys and reports use."""
    kind: Kind
    setup: ScoringSetup
    start_token_override: str | None = None
    """``--start-token`` (or the sidebar's): for this model only, never for a reference or base model."""
    trust_remote_code: bool = False
    device_map: str | None = None
    served: ServedModel | None = None
    loader: Loader | None = None
    """How to load the model (``Loader``), shared with the handles ``beside`` it; None: load here under ``setup``,
    by the kind the handle was resolved to."""
    loading_notice: Notice | None = None
    """Shown while the weights load here (``Notice``); shared with the handles ``beside`` it."""
    _loaded: dict[str, ScoringModel] = field(default_factory=dict, repr=False)
    _loading: threading.RLock = field(default_factory=threading.RLock, repr=False)
    """One load at a time per family of handles: a handle shared by several sessions loads its weights once."""

    @cached_property
    def identity(self) -> dict[str, Any]:
        """Which weights the choice names (``core.engine.identity``); a served model's, as far as its API tells."""
        if self.served is not None or self.kind == "served":
            return self._served.identity()
        from core.engine.identity import model_identity

        return model_identity(self.spec, self.setup.revision, kind=self.kind)

    @cached_property
    def start_token(self) -> str:
        """The start token scoring will use, known before the weights load (it is part of every run key)."""
        if self.served is not None or self.kind == "served":
            return self._served.start_token
        from core.engine.models import planned_start_token

        return planned_start_token(
            self.spec, override=self.start_token_override, revision=self.setup.revision, kind=self.kind
        )

    @property
    def _served(self) -> ServedModel:
        if self.served is None:
            raise _not_connected(self.spec)
        return self.served

    @property
    def key(self) -> dict[str, str]:
        """The part of a run key that says which model scored: spec, the weights' identity and start token."""
        from core.engine.identity import identity_digest

        return {"model": self.spec, "model_identity": identity_digest(self.identity), "start_token": self.start_token}

    @property
    def recorded_identity(self) -> dict[str, Any]:
        """The identity with its start token, as provenance records each model role."""
        return {**self.identity, "start_token": self.start_token}

    @property
    def capabilities(self) -> frozenset[str]:
        return self.served.capabilities if self.served is not None else ALL_CAPABILITIES

    @property
    def source_label(self) -> str:
        return self.served.source_label if self.served is not None else f"the model {self.spec} loaded here"

    def load(self) -> ScoringModel:
        """The model source, loaded on first use and kept (a served model is already connected)."""
        if self.served is not None:
            return self.served
        with self._loading:
            if self.spec not in self._loaded:
                self._loaded[self.spec] = self._load()
            return self._loaded[self.spec]

    def beside(self, spec: str, *, tested: bool = False) -> ModelHandle:
        """Another model under the same setup and loader: a reference or base model keeps its own start-token
        rule; another ``tested`` model (loss delta compares several) shares this one's override."""
        spec = spec.strip()
        if spec == self.spec:
            return self
        return replace(
            self,
            spec=spec,
            kind=model_kind(spec),
            start_token_override=self.start_token_override if tested else None,
            served=None,
            _loaded=self._loaded,
            _loading=self._loading,
        )

    def _load(self) -> ScoringModel:
        if self.loader is not None:
            return self.loader(self.spec)
        from core.engine import distributed
        from core.engine.models import load_model

        with self.loading_notice(self.spec) if self.loading_notice is not None else nullcontext():
            return load_model(
                self.spec,
                kind=self._local_kind,
                device=distributed.rank_device(self.setup.device),
                dtype=self.setup.torch_dtype,
                revision=self.setup.revision,
                trust_remote_code=self.trust_remote_code,
                start_token=self.start_token_override,
                device_map=self.device_map,
            )

    @property
    def _local_kind(self) -> LocalKind:
        """The kind this handle was resolved to, for loading here (a served model is never loaded here)."""
        if self.kind == "served":
            raise _not_connected(self.spec)
        return self.kind


def resolve_model(
    spec: str,
    *,
    setup: ScoringSetup | None = None,
    start_token: str | None = None,
    trust_remote_code: bool = False,
    device_map: str | None = None,
    loader: Loader | None = None,
    loading_notice: Notice | None = None,
) -> ModelHandle:
    """The handle of a model named by ``spec`` (bundled name, folder or hub id), loaded in this process.

    A served model's name cannot be resolved from its text: the server must be reached (``served_handle``).
    """
    spec = (spec or "").strip()
    if not spec:
        raise LeakLensError("No model given: pass a bundled name, a local directory or a hub id.")
    if is_served_name(spec):
        raise _not_connected(spec)
    return ModelHandle(
        spec=spec,
        kind=model_kind(spec),
        setup=setup or resolve_setup(),
        start_token_override=(start_token or "").strip() or None,
        trust_remote_code=trust_remote_code,
        device_map=device_map,
        loader=loader,
        loading_notice=loading_notice,
    )


def served_handle(served: ServedModel, *, setup: ScoringSetup | None = None) -> ModelHandle:
    """The handle of a connected served model (``core.engine.served.connect``)."""
    return ModelHandle(spec=served.spec, kind="served", setup=setup or resolve_setup(), served=served)


def _not_connected(spec: str) -> ServedModelError:
    """The error for a served model's name with no connection behind it (one wording for every way in)."""
    return ServedModelError(f"{spec} is not connected: give its --endpoint (or press Check connection).")


def is_served_name(spec: str) -> bool:
    """Whether ``spec`` is how a served model's name reads (the one place that reads the prefix)."""
    return spec.strip().startswith(SERVED_PREFIX)
