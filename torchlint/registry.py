"""Finds every rule by walking the `torchlint.rules` package; there is no hand-kept list."""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache

from torchlint.finding import (
    INTERNAL_ERROR_CODE,
    INTERNAL_ERROR_NAME,
    PARSE_ERROR_CODE,
    PARSE_ERROR_NAME,
)
from torchlint.rule import Rule

CODE_PATTERN = re.compile(r"^TL\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

# Codes that no rule class owns but that selection and suppression must know.
BUILTIN_CODES = {PARSE_ERROR_CODE: PARSE_ERROR_NAME, INTERNAL_ERROR_CODE: INTERNAL_ERROR_NAME}


class RegistryError(Exception):
    pass


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    package = importlib.import_module("torchlint.rules")
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
            ):
                found.append(value)
    _validate(found)
    return tuple(sorted(found, key=lambda r: r.CODE))


def _validate(rules: list[type[Rule]]) -> None:
    codes: dict[str, type[Rule]] = {}
    names: dict[str, type[Rule]] = {}
    for rule in rules:
        for attr in ("CODE", "NAME", "SUMMARY", "TRIGGERS"):
            if not hasattr(rule, attr):
                raise RegistryError(f"rule {rule.__qualname__} has no {attr}")
        if not CODE_PATTERN.match(rule.CODE) or rule.CODE in BUILTIN_CODES:
            raise RegistryError(f"rule {rule.__qualname__} has an invalid code {rule.CODE!r}")
        if not NAME_PATTERN.match(rule.NAME):
            raise RegistryError(f"rule {rule.CODE} has a name that is not kebab-case: {rule.NAME!r}")
        if rule.CODE in codes:
            raise RegistryError(f"duplicate rule code {rule.CODE}: {codes[rule.CODE].__qualname__} and {rule.__qualname__}")
        if rule.NAME in names:
            raise RegistryError(f"duplicate rule name {rule.NAME}: {names[rule.NAME].CODE} and {rule.CODE}")
        codes[rule.CODE] = rule
        names[rule.NAME] = rule


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    key_upper = key.upper()
    for rule in all_rules():
        if rule.CODE == key_upper or rule.NAME == key.lower():
            return rule
    return None


def known_codes() -> dict[str, str]:
    """Every code a finding can carry, mapped to its name."""
    codes = {rule.CODE: rule.NAME for rule in all_rules()}
    codes.update(BUILTIN_CODES)
    return codes


def matches(selector: str, code: str, name: str) -> bool:
    """A selector is `ALL`, a code, a code prefix (`TL00`) or a rule name."""
    sel = selector.strip()
    if sel.upper() == "ALL":
        return True
    if sel.lower() == name:
        return True
    return code.startswith(sel.upper()) and len(sel) >= 2


def is_valid_selector(selector: str) -> bool:
    return any(matches(selector, code, name) for code, name in known_codes().items()) or selector.strip().upper() == "ALL"
