"""TL103 memory-growth on any device: earlier steps' autograd graphs that stay alive.

Each backward call tags the root of its graph: a small object stored in the root node's
`metadata` dict lives exactly as long as the node, and a weak reference to it tells
whether the graph is still alive. `total_loss += loss` keeps every step's graph, so the
number of earlier steps with a live graph grows by one per step; keeping one "best loss"
keeps at most one. When growth is seen, the variables of the script's frames are searched
for the tensor that holds the old graphs, to name it and its line.
"""

from __future__ import annotations

import ast
import weakref
from collections import deque
from functools import lru_cache
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Iterator

import torch

from torchlint.runtime_probe.frames import is_user_file
from torchlint.runtime_probe.protocol import Event, Frame
from torchlint.sources import SourceFile, read_source

TAG = "torchlint.step"
MIN_STEPS = 6
MIN_ALIVE = 4
NODE_LIMIT = 20000
CONTAINER_ITEMS = 16


class _Tag:
    __slots__ = ("step", "__weakref__")

    def __init__(self, step: int) -> None:
        self.step = step


def tag_graph(tensor: torch.Tensor, key: str, tag: Any) -> bool:
    node: Any = tensor.grad_fn
    if node is None:
        return False
    node.metadata[key] = tag
    return True


def graph_tags(roots: list[Any], key: str, limit: int = NODE_LIMIT) -> Iterator[Any]:
    """Tags stored under `key` in the nodes of the graphs below `roots` (grad_fn objects)."""
    seen: set[int] = set()
    keep: list[Any] = []  # holding the node objects keeps their ids unique during the walk
    queue = deque(node for node in roots if node is not None)
    while queue and len(keep) < limit:
        node = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        tag = node.metadata.get(key)
        if tag is not None:
            yield tag
        queue.extend(child for child, _ in node.next_functions if child is not None)


class GraphCheck:
    def __init__(self) -> None:
        self._tags: list[tuple[int, weakref.ref[_Tag]]] = []
        self._backward_stack: tuple[Frame, ...] = ()
        self.history: list[tuple[int, int]] = []
        self._found: tuple[int, tuple[Frame, ...], str | None] | None = None

    def on_backward(self, roots: list[torch.Tensor], completed_steps: int, stack: Callable[[], tuple[Frame, ...]]) -> None:
        for root in roots:
            tag = _Tag(completed_steps)
            if tag_graph(root, TAG, tag):
                self._tags.append((completed_steps, weakref.ref(tag)))
        self._backward_stack = self._backward_stack or stack()

    def after_step(self, step: int, frame: FrameType | None) -> int:
        """Record how many earlier steps still have a live graph after `step`; returns it."""
        self._tags = [(s, ref) for s, ref in self._tags if ref() is not None]
        # Graphs tagged `step - 1` belong to this step's own backward passes.
        old = {s for s, _ in self._tags if s < step - 1}
        count = len(old)
        growing = not self.history or count > self.history[-1][1]
        self.history.append((step, count))
        if self._found is None and step >= MIN_STEPS and count >= MIN_ALIVE and 2 * count >= step - 1 and growing:
            self._found = (step, *_holder(frame, old, self._backward_stack))
        return count

    def events(self, final: bool) -> list[Event]:
        if self._found is None:
            return []
        step, stack, holder = self._found
        last_step, alive = self.history[-1]
        what = f"`{holder}` keeps" if holder else "something keeps"
        message = (
            f"{what} the autograd graph of every step alive: {alive} earlier steps' graphs were still alive "
            f"after step {last_step}, one more per step; accumulate `loss.item()` or `loss.detach()` instead"
        )
        evidence = {
            "alive_graphs": alive,
            "after_step": last_step,
            "growth_per_step": round(alive / max(last_step - 1, 1), 3),
            "first_seen_at_step": step,
            "holder": holder,
        }
        return [Event("TL103", stack, message, evidence)]


def _holder(frame: FrameType | None, old: set[int], fallback: tuple[Frame, ...]) -> tuple[tuple[Frame, ...], str | None]:
    """The variable of a user frame whose tensors hold the most old graphs, and its line."""
    best: tuple[int, str, FrameType] | None = None
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            for name, value in _variables(frame):
                held = {getattr(t, "step", None) for t in graph_tags([x.grad_fn for x in _tensors(value)], TAG)} & old
                if len(held) >= MIN_ALIVE and (best is None or len(held) > best[0]):
                    best = (len(held), name, frame)
        frame = frame.f_back
    if best is None:
        return fallback, None
    _, name, found = best
    line = _update_line(found.f_code.co_filename, found.f_lineno, name) or found.f_lineno
    return (Frame(found.f_code.co_filename, line),), name


def _variables(frame: FrameType) -> Iterator[tuple[str, Any]]:
    seen = set()
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in list(scope.items()):
            if name not in seen and not name.startswith("__"):
                seen.add(name)
                yield name, value


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value] if value.grad_fn is not None else []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, deque)):
        items = list(value)
        picked = items if len(items) <= CONTAINER_ITEMS else items[: CONTAINER_ITEMS // 2] + items[-CONTAINER_ITEMS // 2 :]
        return [t for t in picked if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    return []


@lru_cache(maxsize=32)
def _tree(filename: str) -> ast.Module | None:
    source = read_source(Path(filename))
    if not isinstance(source, SourceFile):
        return None
    try:
        return ast.parse(source.text)
    except SyntaxError:
        return None


def _update_line(filename: str, near: int, name: str) -> int | None:
    """The line, in the function around `near`, that adds to `name`: `name += ...`,
    `name = name + ...`, `name.append(...)` or `name[...] = ...`; the nearest one wins."""
    tree = _tree(filename)
    if tree is None:
        return None
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= near <= (node.end_lineno or 0):
            if scope is tree or node.lineno > getattr(scope, "lineno", 0):
                scope = node
    lines = [node.lineno for node in ast.walk(scope) if isinstance(node, ast.stmt | ast.expr) and _updates(node, name)]
    return min(lines, key=lambda line: abs(line - near)) if lines else None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _updates(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.AugAssign):
        return _is_name(node.target, name)
    if isinstance(node, ast.Assign):
        if any(isinstance(t, ast.Subscript) and _is_name(t.value, name) for t in node.targets):
            return True
        return any(_is_name(t, name) for t in node.targets) and any(_is_name(n, name) for n in ast.walk(node.value))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("append", "extend", "insert", "add", "appendleft") and _is_name(node.func.value, name)
    return False
