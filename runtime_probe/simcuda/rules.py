"""Which device check real CUDA applies to each aten operator, read from the
`native_functions.yaml` that ships in the torch wheel (`torchgen/packaged`), plus the
hand rules for operators whose check is written by hand in C++.

Rules:

- STRICT: the operator has a CUDA kernel and no `device_check: NoCheck`; the generated
  CUDA wrapper (`check_and_update_common_device`) requires every positional tensor and
  `out=` tensor on one device, 0-dim CPU tensors included.
- TI: a TensorIterator operator (`structured_inherits: TensorIteratorBase`, its own or
  its delegate's): 0-dim CPU tensors are allowed as scalars, any other CPU tensor mixed
  with a CUDA one is an error.
- COMPOSITE: only a CompositeExplicitAutograd kernel; it is run on the simulated
  tensors so that the operators it calls are checked.
- UNKNOWN: a NoCheck operator whose rule is its own: never raised, only recorded.

Hand rules (`HAND_RULES`, each tested in tests/test_simcuda.py):

- CROSS: copies between devices are what these operators are for (`copy_`, `_to_copy`,
  `lift_fresh`, `detach`, `alias`), and `_ctc_loss.Tensor` (whose CPU lengths CUDA
  accepts).
- INDEX: `index`/`index_put` accept CPU index tensors into a CUDA tensor; CUDA indices
  into a CPU tensor raise "indices should be either on cpu or on the same device as the
  indexed tensor".
- CONV: `convolution` compares input and weight types: "Input type (torch.FloatTensor)
  and weight type (torch.cuda.FloatTensor) should be the same ...".
- FOREACH: `_foreach_*` list operators require each position of their lists on one
  device (TensorIterator's message); a single list may mix devices (slow path).
- `where.self` is a TensorIterator operator that the yaml marks NoCheck.

The table is cached per torch version under the user's cache folder (parsing the yaml
takes about two seconds)."""

from __future__ import annotations

import json
import os
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any


class Rule(str, Enum):
    STRICT = "STRICT"
    TI = "TI"
    COMPOSITE = "COMPOSITE"
    UNKNOWN = "UNKNOWN"
    CROSS = "CROSS"
    INDEX = "INDEX"
    CONV = "CONV"
    FOREACH = "FOREACH"


HAND_RULES: dict[str, Rule] = {
    **dict.fromkeys(
        ("copy_", "_copy_from", "_copy_from_and_resize", "_to_copy", "copy", "lift_fresh", "lift_fresh_copy", "detach", "alias"),
        Rule.CROSS,
    ),
    "_ctc_loss.Tensor": Rule.CROSS,
    **dict.fromkeys(("index.Tensor", "_index_put_impl_", "index_put_", "index_put"), Rule.INDEX),
    **dict.fromkeys(("where.self", "where.self_out"), Rule.TI),
    **dict.fromkeys(("convolution", "convolution_overrideable", "_convolution"), Rule.CONV),
}
CACHE_FORMAT = 1


def _yaml_path() -> Path:
    import torchgen  # type: ignore[import-untyped]  # torchgen ships no py.typed marker

    return Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


def _dispatch_keys(entry: dict[str, Any]) -> set[str]:
    return {key.strip() for keys in (entry.get("dispatch") or {}) for key in keys.split(",")}


def rules_from_yaml(entries: list[dict[str, Any]]) -> dict[str, str]:
    """Operator name with overload (`add.Tensor`) -> rule, for the yaml's entries."""
    by_name = {entry["func"].split("(")[0]: entry for entry in entries}
    table: dict[str, str] = {}
    for name, entry in by_name.items():
        delegate = by_name.get(entry.get("structured_delegate") or "", {})
        keys = _dispatch_keys(entry) | _dispatch_keys(delegate)
        iterator = "TensorIteratorBase" in (entry.get("structured_inherits"), delegate.get("structured_inherits"))
        if iterator:
            rule = Rule.TI
        elif entry.get("device_check") != "NoCheck" and "CUDA" in keys:
            rule = Rule.STRICT
        elif "CUDA" not in keys and keys & {"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}:
            rule = Rule.COMPOSITE
        else:
            rule = Rule.UNKNOWN
        table[name] = rule.value
    return table


def _cache_file(torch_version: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchlint" / f"simcuda-rules-{CACHE_FORMAT}-{torch_version}.json"


def load_rules(torch_version: str) -> dict[str, str]:
    cache = _cache_file(torch_version)
    try:
        return dict(json.loads(cache.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    import yaml  # type: ignore[import-untyped]  # types-PyYAML is not a dependency

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(_yaml_path(), encoding="utf-8") as handle:
        table = rules_from_yaml(yaml.load(handle, Loader=loader))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}")
        tmp.write_text(json.dumps(table), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass  # an unwritable cache costs the parse next time, nothing else
    return table


class RuleBook:
    def __init__(self, table: dict[str, str]) -> None:
        self._table = table

    @lru_cache(maxsize=None)
    def rule(self, op: Any) -> Rule:
        """The device rule for an `OpOverload`."""
        schema = op._schema
        name = schema.name.split("::", 1)[1]
        full = f"{name}.{schema.overload_name}" if schema.overload_name else name
        for key in (full, name):
            if key in HAND_RULES:
                return HAND_RULES[key]
        if name.startswith("_foreach_"):
            return Rule.FOREACH
        return Rule(self._table.get(full, Rule.UNKNOWN.value))
