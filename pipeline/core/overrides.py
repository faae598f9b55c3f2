"""A run's options as ``key=value`` text (the names of :class:`pipeline.core.config.RunConfig`),
typed by their declarations: the candidates of ``--select`` (:mod:`pipeline.apps.selection`)
and the settings of the accuracy benchmark."""

from __future__ import annotations

from typing import Any

from hybridbn.options import FILE, FLAG, INT, NAMES, TEXT
from pipeline.core.declarations import BOOTSTRAP, CHOICES, PARAMS, SELECTION, SOURCES, ConfigError

CANDIDATE_SEPARATOR = ";"
FIXED = frozenset(p.name for p in (*SOURCES, *SELECTION, *BOOTSTRAP))
"""Options a candidate may not override: the data, the selection itself, and the bootstrap
(which applies to the chosen setting)."""


def parse_overrides(text: str) -> dict[str, Any]:
    """``key=value,key=value`` (RunConfig names) as typed option values, ``'none'`` for no bound."""
    overrides: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = (s.strip() for s in item.partition("="))
        if not sep or not key or not value:
            raise ConfigError(f"{item!r} is not key=value")
        if key not in CHOICES and key not in PARAMS:
            raise ConfigError(f"{key!r} is not an option of a run")
        overrides[key] = value.lower() if key in CHOICES else _typed(key, value)
    return overrides


def _typed(key: str, text: str) -> Any:
    param = PARAMS[key]
    if text.lower() == "none" and (param.none or param.default is None):
        return None
    if param.kind in (TEXT, FILE, NAMES):  # (one name for NAMES)
        return text
    if param.kind == FLAG:
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"{key} must be true or false, got {text!r}")
        return text.lower() == "true"
    try:
        return int(text) if param.kind == INT else float(text)
    except ValueError:
        raise ConfigError(f"{key} must be {'an integer' if param.kind == INT else 'a number'}, "
                          f"got {text!r}") from None


def parse_candidates(text: str) -> list[dict[str, Any]]:
    """The candidates of ``--select``: overrides separated by ``;`` (the empty text is the run's
    own setting)."""
    candidates = []
    for part in text.split(CANDIDATE_SEPARATOR):
        overrides = parse_overrides(part)
        fixed = sorted(FIXED & set(overrides))
        if fixed:
            raise ConfigError(f"a candidate cannot set {fixed[0]}: it applies to the whole run")
        candidates.append(overrides)
    if len(candidates) < 2:
        raise ConfigError(f"give at least two candidates separated by {CANDIDATE_SEPARATOR!r}, "
                          f"e.g. \"method=none; score=qnml\"")
    return candidates


def candidate_label(overrides: dict[str, Any]) -> str:
    return ",".join(f"{k}={'none' if v is None else v}" for k, v in overrides.items()) or "(the run's own)"
