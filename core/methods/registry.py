"""The registry: every method family by name, the default set, and parsing of method specs.

Adding a method = one new module + one line in ``FAMILIES``.
"""

from __future__ import annotations

import dataclasses
import typing

from core.methods.base import Method, MethodConfigError
from core.methods.extraction import Extraction
from core.methods.loss import Loss
from core.methods.min_k import MinK
from core.methods.min_k_plus_plus import MinKPlusPlus
from core.methods.neighbourhood import Neighbourhood
from core.methods.recall import Recall
from core.methods.reference import ReferenceModel
from core.methods.slope import ProbabilitySlope
from core.methods.zlib_ratio import ZlibRatio

FAMILIES: dict[str, type[Method]] = {
    cls.family: cls
    for cls in (
        Loss,
        ZlibRatio,
        MinK,
        MinKPlusPlus,
        ProbabilitySlope,
        ReferenceModel,
        Neighbourhood,
        Recall,
        Extraction,
    )
}


def default_methods() -> list[Method]:
    """The standard passage detector set (no auxiliary passes needed)."""
    methods: list[Method] = [Loss(), ZlibRatio(), MinK(20), MinKPlusPlus(20)]
    methods += [ProbabilitySlope(adjust=a) for a in ("none", "mean", "z")]
    methods.append(ProbabilitySlope(values="prob"))
    methods += [ProbabilitySlope(kgram=1, adjust=a) for a in ("none", "mean", "z")]
    methods += [ProbabilitySlope(kgram=k, adjust="mean") for k in range(2, 7)]
    return methods


def make_method(family: str, **params: object) -> Method:
    """Build a method by family name with keyword parameters; clear errors for unknown names or params."""
    cls = FAMILIES.get(family)
    if cls is None:
        raise MethodConfigError(f"Unknown method '{family}'. Known: {', '.join(sorted(FAMILIES))}.")
    allowed = {f.name for f in dataclasses.fields(cls)}
    unknown = set(params) - allowed
    if unknown:
        raise MethodConfigError(
            f"Method '{family}' has no parameter(s) {', '.join(sorted(unknown))}; "
            f"it takes: {', '.join(sorted(allowed)) or 'none'}."
        )
    return cls(**params)


def parse_method(spec: str) -> Method:
    """Parse ``family`` / ``family:param=value,...`` or the key of a default method (e.g. ``min_k_20``)."""
    spec = spec.strip()
    by_key = {m.key: m for m in default_methods()}
    if spec in by_key:
        return by_key[spec]
    family, _, arg_text = spec.partition(":")
    cls = FAMILIES.get(family)
    if cls is None:
        raise MethodConfigError(
            f"Unknown method '{spec}'. Use a family ({', '.join(sorted(FAMILIES))}) with optional "
            f"parameters like 'min_k:k=10', or a default key ({', '.join(by_key)})."
        )
    hints = typing.get_type_hints(cls)
    params: dict[str, object] = {}
    for item in filter(None, (p.strip() for p in arg_text.split(","))):
        name, eq, raw = item.partition("=")
        if not eq:
            raise MethodConfigError(f"Parameter '{item}' in '{spec}' must look like name=value.")
        params[name.strip()] = _coerce(raw.strip(), hints.get(name.strip()), spec)
    return make_method(family, **params)


def parse_methods(specs: list[str] | None) -> list[Method]:
    """Parse a list of specs; None or empty means the default set. Duplicates are dropped."""
    if not specs:
        return default_methods()
    methods: dict[str, Method] = {}
    for spec in specs:
        for part in spec.split(";"):
            if part.strip():
                method = parse_method(part)
                methods.setdefault(method.key, method)
    return list(methods.values())


def _coerce(raw: str, hint: object, spec: str) -> object:
    try:
        if hint is int:
            return int(raw)
        if hint is float:
            return float(raw)
    except ValueError as exc:
        raise MethodConfigError(f"Could not read '{raw}' as a number in '{spec}'.") from exc
    return raw
