"""Parts of a batch that a loop over a loader moves and parts it leaves on the host, where
the whole-loop view (`loaders.forgotten_batch_parts`) cannot tell them apart.

Path by path: the `if`/`elif`/`else` chains whose branches move different parts of the
batch (`images` on one, `target` on another), the part that a branch leaves on the host
while a sibling branch moves it, and the calls that meet that part on the path through the
branch. Only the branches of one chain are told apart: one run takes exactly one of them.
Separate `if`s in a row (`if args.gpu is not None: images = ...` then `if
torch.cuda.is_available(): target = ...`) may be taken together, so their moves count for
every path, as does any move outside the chain.

Item by item: a batch that is not unpacked (`for batch in loader`) and whose items the loop
moves one by one (`batch["input_ids"].to(device)`), leaving an item (`batch["labels"]`)
that a loss or torch op meets with the model's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.calls import method_name
from torchlint.rules._analysis.dataflow import target_names
from torchlint.rules._analysis.devices import Placements, placements
from torchlint.rules._analysis.flow import chain_blocks
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.loaders import (
    ForgottenPartUse,
    batch_target,
    calls_on_raw_batch,
    calls_on_raw_data,
    part_uses_with_output,
    parts_moved_by,
)
from torchlint.rules._analysis.names import string_text
from torchlint.rules._analysis.totals import binding_before
from torchlint.rules._vocabulary import says_length

# Statements after which a branch's path does not reach the code after the chain.
EXITS = (cst.Continue, cst.Break, cst.Return, cst.Raise)


@dataclass(frozen=True)
class PartLeftByBranch:
    """A part of the batch (`target` of `for images, target in loader`) that one branch of
    `chain` leaves on the host while it moves another part, and that a sibling branch moves
    (`moved_by`); `calls` are the calls on the path through `branch` with the arguments that
    hold the part as the loader yielded it."""

    part: str
    chain: cst.If
    branch: cst.BaseSuite
    moved: str  # a part that the branch does move
    moved_by: cst.Call
    calls: list[tuple[cst.Call, list[cst.BaseExpression]]]


def parts_left_by_branches(ctx: FileContext, loop: cst.For) -> list[PartLeftByBranch]:
    """The parts of the batch unpacked by `loop` that a branch of one of its `if` chains
    leaves unmoved while it moves another part and a sibling branch moves them: not a part
    that the chain's conditions test (`if target is not None:`), that the loop may move
    outside the chain, or a length (kept on the host for packing and CTC); not on a branch
    that leaves the iteration (`continue`, `return`); only where some call on the path
    takes the part."""
    idx, funcs = index(ctx), functions(ctx)
    target = batch_target(loop)
    if not isinstance(target, (cst.Tuple, cst.List)):
        return []
    parts = {name.value for name in target_names(target)}
    scope = idx.scope(loop)
    places = placements(ctx)
    found: list[PartLeftByBranch] = []
    for chain in idx.within(loop.body, cst.If):
        if idx.scope(chain) is not scope or _is_elif(idx, chain):
            continue
        blocks = [block for block in chain_blocks(chain) if block is not None]
        outside = parts_moved_by(idx, funcs, (c for c in idx.within(loop.body, cst.Call) if not idx.contains(chain, c)), parts)
        tested = _tested_names(idx, chain)
        may_move = [parts_moved_by(idx, funcs, idx.within(block, cst.Call), parts) for block in blocks]
        moves = [_data_moves(idx, funcs, places, block, parts) for block in blocks]
        for i, block in enumerate(blocks):
            if not moves[i] or _leaves(idx, block, scope):
                continue
            for j, sibling in enumerate(moves):
                for part, move in sorted(sibling.items()):
                    if j == i or part in may_move[i] or part in outside or part in tested or says_length(part):
                        continue
                    if any(f.part == part and f.branch is block for f in found):
                        continue
                    skipping = tuple(other for k, other in enumerate(blocks) if k != i)
                    calls = calls_on_raw_data(idx, loop.body, parts, scope, skipping=skipping)
                    held = [(call, taking) for call, inputs in calls if (taking := [e for e in inputs if _holds(idx, e, part)])]
                    if held:
                        found.append(PartLeftByBranch(part, chain, block, min(moves[i]), move, held))
    return found


def _data_moves(
    idx: Index, funcs: Functions, places: Placements, block: cst.BaseSuite, parts: set[str]
) -> dict[str, cst.Call]:
    """The parts that a data move in `block` mentions (`target.cuda()`, `to_device(x, device)`),
    not those only handed to a local helper or cast (`.to(torch.half)`)."""
    return parts_moved_by(idx, funcs, [c for c in idx.within(block, cst.Call) if _moves_to_device(places, c)], parts)


def _moves_to_device(places: Placements, call: cst.Call) -> bool:
    """A call that may put data on a device, other than a `.to()` to a dtype or the CPU."""
    return Placements.is_data_move(call) and (method_name(call) != "to" or places.moves_to_accelerator(call))


def _is_elif(idx: Index, stmt: cst.If) -> bool:
    parent = idx.parent(stmt)
    return isinstance(parent, cst.If) and parent.orelse is stmt


def _tested_names(idx: Index, chain: cst.If) -> set[str]:
    names: set[str] = set()
    stmt: cst.BaseSuite | cst.If | cst.Else | None = chain
    while isinstance(stmt, cst.If):
        names.update(name.value for name in idx.within(stmt.test, cst.Name))
        stmt = stmt.orelse
    return names


def _leaves(idx: Index, block: cst.BaseSuite, scope: cst.CSTNode) -> bool:
    return any(idx.scope(node) is scope for node in idx.within(block, *EXITS))


def _holds(idx: Index, expr: cst.BaseExpression, part: str) -> bool:
    return any(name.value == part for name in idx.within(expr, cst.Name))


def items_left_on_host(ctx: FileContext, loop: cst.For) -> list[ForgottenPartUse]:
    """The losses and torch ops of `loop` that meet a model's output with an item of the
    batch (`batch["labels"]`, or a name bound to it) that the loop never moves while it
    moves other items to a device (`batch["input_ids"].to(device)`; writing an item,
    `batch["mask"] = ...`, counts as moving it). Nothing when the loop may move the whole batch (`batch.to(device)`, `to_device(batch)`, a local
    helper given it, `{k: v.cuda() for k, v in batch.items()}` bound to the batch's name)
    or writes items by a key it computes (`batch[k] = ...`); lengths stay on the host."""
    target = batch_target(loop)
    if not isinstance(target, cst.Name):
        return []
    idx, funcs, places = index(ctx), functions(ctx), placements(ctx)
    batch = target.value
    moved = _moved_items(idx, funcs, loop, batch)
    if not moved or not any(_moves_to_device(places, call) for call in idx.within(loop.body, cst.Call)):
        return []
    found: list[ForgottenPartUse] = []
    calls = calls_on_raw_batch(idx, loop)
    names = {name.value for name in idx.within(loop.body, cst.Name)}
    for use in part_uses_with_output(ctx, loop, calls, names):
        key = _item_key(idx, loop, use.part, batch)
        if key is not None and key not in moved and not says_length(key):
            found.append(use)
    return found


def _moved_items(idx: Index, funcs: Functions, loop: cst.For, batch: str) -> set[str]:
    """The keys of the items of `batch` that the loop may move or write; empty when it may
    move the whole batch or writes an item by a computed key."""
    keys: set[str] = set()
    for assign in idx.within(loop.body, cst.Assign):
        for target in assign.targets:
            item = _literal_item(target.target, batch)
            if item is False:
                return set()
            if item is not None:
                keys.add(item)
    for call in idx.within(loop.body, cst.Call):
        if not (Placements.is_data_move(call) or funcs.resolve(call)):
            continue
        for name in idx.within(call, cst.Name):
            if name.value != batch:
                continue
            item = _literal_item(idx.parent(name), batch)
            if not isinstance(item, str):
                return set()  # the batch itself, or an item by a computed key
            keys.add(item)
    return keys


def _literal_item(expr: cst.CSTNode | None, batch: str) -> str | Literal[False] | None:
    """The key of `batch["key"]`; False for `batch` itself or `batch[k]` (any item); None for
    anything else."""
    if isinstance(expr, cst.Name):
        return False if expr.value == batch else None
    if not (isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value == batch):
        return None
    key = None
    if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = string_text(expr.slice[0].slice.value)
    return key if key is not None else False


def _item_key(idx: Index, loop: cst.For, expr: cst.BaseExpression, batch: str) -> str | None:
    """The key of the item of `batch` that `expr` holds as the loader yielded it: `batch["labels"]`
    (through tensor methods that keep it where it is), or a name bound to one in the loop."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        expr = expr.func.value
    if isinstance(expr, cst.Name) and expr.value != batch:
        binding = binding_before(idx, loop, expr.value, expr)
        if binding is None or binding.unpacked:
            return None
        return _item_key(idx, loop, binding.value, batch)
    item = _literal_item(expr, batch)
    return item if isinstance(item, str) else None
