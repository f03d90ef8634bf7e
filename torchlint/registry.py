"""Finds every rule by walking the `torchlint.rules` package; there is no hand-kept list.

A rule's module is named after its code and name (`tl001_missing_zero_grad.py` holds
TL001 missing-zero-grad), so that selection, configuration checks and the result cache
know every rule from the file names alone, without importing any rule (or LibCST).
`all_rules()` imports them and checks that the names agree.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from functools import cached_property, lru_cache
from typing import Iterator, Sequence, overload

from torchlint.finding import FILE_PROBLEMS, UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION_NAME
from torchlint.rule import Rule, RuleMeta

CODE_PATTERN = re.compile(r"^TL\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
MODULE_PATTERN = re.compile(r"^tl(\d{3})_([a-z0-9_]+)$")
RULES_PACKAGE = "torchlint.rules"

# Codes that no rule class owns but that selection and suppression must know.
BUILTIN_CODES = {
    **{code: name for code, (name, _) in FILE_PROBLEMS.items()},
    UNUSED_SUPPRESSION_CODE: UNUSED_SUPPRESSION_NAME,
}


class RegistryError(Exception):
    pass


def rule_module_names() -> list[str]:
    """Names of the modules of the rules package that hold rules (not `_helpers`)."""
    spec = importlib.util.find_spec(RULES_PACKAGE)
    locations = spec.submodule_search_locations if spec else None
    return sorted(info.name for info in pkgutil.iter_modules(locations or []) if not info.name.startswith("_"))


def module_name_for(code: str, name: str) -> str:
    return f"tl{code[2:]}_{name.replace('-', '_')}"


@lru_cache(maxsize=1)
def catalog() -> dict[str, str]:
    """Code -> name of every rule, read from the rule modules' names without importing them."""
    found: dict[str, str] = {}
    for module_name in rule_module_names():
        match = MODULE_PATTERN.match(module_name)
        if match is None:
            raise RegistryError(
                f"rule module {module_name!r} is not named after its rule: "
                "name it tlNNN_rule_name.py after the rule's CODE and NAME"
            )
        found[f"TL{match.group(1)}"] = match.group(2).replace("_", "-")
    return found


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for module_name in rule_module_names():
        module = importlib.import_module(f"{RULES_PACKAGE}.{module_name}")
        found.extend(
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, Rule)
            and value is not Rule
            and value.__module__ == module.__name__
        )
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
        expected = module_name_for(rule.CODE, rule.NAME)
        if rule.__module__.rsplit(".", 1)[-1] != expected:
            raise RegistryError(f"rule {rule.CODE} {rule.NAME} must live in a module named {expected}.py")
    modules = [f"{RULES_PACKAGE}.{name}" for name in rule_module_names()]
    empty = sorted(set(modules) - {rule.__module__ for rule in rules})
    if empty:
        raise RegistryError(f"rule module {empty[0]} defines no rule")


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    key_upper = key.upper()
    for rule in all_rules():
        if rule.CODE == key_upper or rule.NAME == key.lower():
            return rule
    return None


def known_codes() -> dict[str, str]:
    """Every code a finding can carry, mapped to its name."""
    codes = dict(catalog())
    codes.update(BUILTIN_CODES)
    return codes


class RuleMetas(Sequence[RuleMeta]):
    """Metadata of every rule, for reporters; the rules are imported on first use, so a
    report of a fully cached run that does not need them never imports them."""

    @cached_property
    def _items(self) -> tuple[RuleMeta, ...]:
        return tuple(RuleMeta.of(rule) for rule in all_rules())

    @overload
    def __getitem__(self, index: int) -> RuleMeta: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[RuleMeta]: ...

    def __getitem__(self, index: int | slice) -> RuleMeta | Sequence[RuleMeta]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[RuleMeta]:
        return iter(self._items)


def matches(selector: str, code: str, name: str) -> bool:
    """A selector is `ALL`, a code, a code prefix (`TL00`) or a rule name."""
    sel = selector.strip()
    if sel.upper() == "ALL":
        return True
    if sel.lower() == name:
        return True
    return code.startswith(sel.upper()) and len(sel) >= 2


def is_selected(code: str, name: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """Whether `select` picks the rule and `ignore` does not drop it."""
    return any(matches(sel, code, name) for sel in select) and not any(matches(sel, code, name) for sel in ignore)


def names_explicitly(selectors: Sequence[str], code: str, name: str) -> bool:
    """Whether a selector picks this code other than as `ALL` or the bare `TL` prefix:
    how opt-in codes (TL900) are enabled."""
    return any(matches(sel, code, name) and sel.strip().upper() not in ("ALL", "TL") for sel in selectors)


def is_valid_selector(selector: str) -> bool:
    return any(matches(selector, code, name) for code, name in known_codes().items()) or selector.strip().upper() == "ALL"
