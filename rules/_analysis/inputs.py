"""Model inputs: which moved model a call feeds its arguments to (`model(x)`, `model.forward(x)`,
`model.generate(ids)`), and the move of that model that happens before some data reaches it,
also of a model that a caller moved and passed in as a parameter. Data that stays on the host
outside a loader loop: the tensors a Hugging Face tokenizer or processor returns
(`tokenizer(text, return_tensors="pt")`, its `input_ids`), tensors that torch makes from
data in the script (`torch.tensor(ids)`, `torch.from_numpy(image)`), CPU tensors until
something moves them, and tensors whose move was thrown away (`img.to(device)` as a statement).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import (
    bind_arguments,
    called_module,
    keyword,
    method_name,
    move_statement,
    parameter_names,
    positional,
    receiver,
)
from torchlint.rules._analysis.dataflow import bindings, target_names
from torchlint.rules._analysis.devices import parallel_wraps, placements
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.loaders import STAYS_PUT, TENSORS_FROM_DATA, calls_after_binding, calls_on_raw_data
from torchlint.rules._analysis.modes import model_key
from torchlint.rules._analysis.names import Imports, imports, last_name, string_text
from torchlint.rules._vocabulary import DATA_TO_TENSOR, TOKENIZER_WORDS, name_tokens, says_length

# Tokenizer methods that take `return_tensors=`; the others are read by their receiver's name.
TOKENIZER_METHODS = frozenset("encode encode_plus batch_encode_plus pad apply_chat_template".split())
# Those that return a plain tensor rather than a `BatchEncoding` (which `.to()` moves in place).
RETURN_TENSOR = frozenset({"encode", "apply_chat_template"})
# Tensor methods that keep a tensor where it is and that no `nn.Module` has (it has
# `float()`, `half()`, `double()`): what they return is a tensor.
TENSOR_ONLY_METHODS = STAYS_PUT - {"float", "double", "half"}
# What makes a CPU tensor from data: a conversion without a `device=`, or the constructor of
# a CPU tensor type (`torch.LongTensor(ids)`).
CPU_TENSOR_MAKERS = DATA_TO_TENSOR | frozenset(
    f"{kind}Tensor" for kind in " Float Double Half BFloat16 Long Int Short Byte Char Bool".split(" ")
)


def model_call(call: cst.Call) -> cst.BaseExpression | None:
    """The model a call feeds its arguments to as inputs: what `called_module` names, the
    model of `model.generate(ids)`, which runs its forward on them (Hugging Face), and the
    model that `writer.add_graph(model, images)` traces by running it on them (TensorBoard)."""
    if method_name(call) == "generate":
        owner = receiver(call)
        return owner if model_key(owner) is not None else None
    if method_name(call) == "add_graph" and len(call.args) >= 2 and call.args[0].keyword is None:
        model = call.args[0].value
        return model if model_key(model) is not None else None
    return called_module(call)


class ModelMoves:
    """The moves of a module's models to an accelerator, as the data fed to them meets them."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.funcs = functions(ctx)
        self.placements = placements(ctx)
        self.wraps = parallel_wraps(ctx)

    def before(self, call: cst.Call, start: cst.CSTNode) -> cst.Call | None:
        """The move of the model that `call` runs, made before the data at `start` (a loop
        over a loader, a sample, a tokenizer's output) reaches it: a move in another scope
        (`__init__`), one earlier in the same scope (also of a parameter: `model.to(device)`
        in `train(model, ...)`), or the move of the model that a call site passes in when
        the model is a parameter of the scope. None for a call of a local
        function, where the model was built again since the move, and for a move that every
        path wraps in `DataParallel` or DDP, which put the inputs where the model is."""
        func = model_call(call)
        key = model_key(func)
        if func is None or key is None or self.funcs.resolve(call):
            return None
        home = self.idx.scope(start)
        parameter = isinstance(func, cst.Name) and isinstance(home, cst.FunctionDef) and func.value in parameter_names(home)
        for move in self.placements.models.get(key, ()):
            if self.placements.rebuilt_since(move, func) or self.wraps.always_wrapped(move):
                continue
            if parameter and self.idx.scope(move) is not home:
                continue  # another function's `model`: the parameter is what the callers pass
            if self.idx.scope(move) is not home or self.idx.order(move) < self.idx.order(start):
                return move
        if parameter and isinstance(home, cst.FunctionDef) and isinstance(func, cst.Name):
            return self.passed_in(home, func.value)
        return None

    def first_fed(
        self, calls: list[tuple[cst.Call, list[cst.BaseExpression]]], start: cst.CSTNode | None
    ) -> tuple[cst.Call, cst.Call, list[cst.BaseExpression]] | None:
        """The first of `calls` (each with the arguments that hold host data from `start`)
        that runs a model moved before the data got there: the call, the move, the inputs.
        With no `start` (data that stays on the host until the call, as a sample does), a
        model moved before the call."""
        for call, inputs in calls:
            move = self.before(call, start or call)
            if move is not None:
                return call, move, inputs
        return None

    def passed_in(self, func: cst.FunctionDef, param: str) -> cst.Call | None:
        """The move of a model that a call site of `func` passes as `param` (one that some path
        leaves unwrapped)."""
        for site in self.funcs.call_sites(func):
            bound = bind_arguments(self.funcs, func, site).get(param)
            key = model_key(bound) if bound is not None else None
            unwrapped = [move for move in self.placements.models.get(key or "", ()) if not self.wraps.always_wrapped(move)]
            if unwrapped:
                return unwrapped[0]
        return None


def model_moves(ctx: FileContext) -> ModelMoves:
    return ctx.analysis(ModelMoves)


@dataclass(frozen=True)
class TokenizerOutput:
    """`ids = tokenizer(text, return_tensors="pt").input_ids` (or the whole encoding, or
    `tokenizer.encode(..., return_tensors="pt")`): tensors made on the CPU."""

    statement: cst.Assign
    tokenizer: cst.Call
    # Names bound to the `BatchEncoding` itself, whose `.to(device)` moves it in place.
    encodings: frozenset[str]


def tokenizer_call(expr: cst.BaseExpression) -> cst.Call | None:
    """The tokenizer or processor call that made `expr` as it returned it: `expr` itself, an
    item or field of it (`["input_ids"]`, `.pixel_values`) or a tensor method that keeps it
    where it is; None once anything else (`.to(device)`) touched it."""
    if isinstance(expr, cst.Call) and _calls_tokenizer(expr):
        return expr
    if isinstance(expr, cst.Subscript):
        return tokenizer_call(expr.value)
    if isinstance(expr, cst.Attribute) and expr.attr.value[:1].islower():
        return tokenizer_call(expr.value)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and method_name(expr) in STAYS_PUT:
        return tokenizer_call(expr.func.value)
    return None


def _calls_tokenizer(call: cst.Call) -> bool:
    """`tokenizer(text, return_tensors="pt")`, `self.processor(images=..., return_tensors="pt")`,
    `tok.encode(text, return_tensors="pt")`: torch tensors from a tokenizer or processor."""
    tensors = keyword(call, "return_tensors")
    if tensors is None or string_text(tensors.value) != "pt":
        return False
    named = receiver(call) if method_name(call) in TOKENIZER_METHODS else call.func
    return named is not None and bool(TOKENIZER_WORDS.intersection(name_tokens(last_name(named) or "")))


def tokenizer_outputs(ctx: FileContext) -> list[TokenizerOutput]:
    """The assignments of a module that bind tensors a tokenizer or processor returned."""
    return ctx.analysis(_build_tokenizer_outputs)


def _build_tokenizer_outputs(ctx: FileContext) -> list[TokenizerOutput]:
    if "return_tensors" not in ctx.source:
        return []
    found: list[TokenizerOutput] = []
    for assign in index(ctx).nodes(cst.Assign):
        made = tokenizer_call(assign.value)
        if made is None:
            continue
        whole = assign.value is made and method_name(made) not in RETURN_TENSOR
        names = frozenset(n.value for t in assign.targets for n in target_names(t.target)) if whole else frozenset()
        found.append(TokenizerOutput(assign, made, names))
    return found


def calls_on_tokenizer_output(idx: Index, output: TokenizerOutput) -> list[tuple[cst.Call, list[cst.BaseExpression]]]:
    """The calls after `output` is bound, in its scope, with the arguments that still hold the
    tokenizer's CPU tensors (as `calls_on_raw_batch` follows a batch); `enc.to(device)` moves
    a `BatchEncoding` in place."""
    return calls_after_binding(idx, output.statement, moved_in_place=output.encodings)


@dataclass(frozen=True)
class DiscardedMove:
    """`img.to(device)` or `img.cuda()` as a statement of its own, where `img` was last bound
    to a tensor (a tensor method's result, `torch.tensor(...)`, a factory, a tokenizer's
    `input_ids`): a tensor's move returns a copy, which the statement throws away. Names of
    other objects are left alone: a `BatchEncoding`, PyG's `Data` or a module moves itself."""

    move: cst.Call
    name: str


def discarded_tensor_moves(ctx: FileContext) -> list[DiscardedMove]:
    return ctx.analysis(_build_discarded_tensor_moves)


def _build_discarded_tensor_moves(ctx: FileContext) -> list[DiscardedMove]:
    idx, binds, imps = index(ctx), bindings(ctx), imports(ctx)
    found: list[DiscardedMove] = []
    for statement in idx.nodes(cst.Expr):
        move = move_statement(statement)
        if move is None:
            continue
        binding = binds.before(idx.scope(statement), move[0], idx.order(statement))
        if binding is not None and binding.value is not None and _evidently_tensor(binding.value, imps):
            found.append(DiscardedMove(move[1], move[0]))
    return found


def _evidently_tensor(expr: cst.BaseExpression, imps: Imports) -> bool:
    made = tokenizer_call(expr)
    if made is not None:
        return expr is not made or method_name(made) in RETURN_TENSOR
    if not isinstance(expr, cst.Call):
        return False
    if isinstance(expr.func, cst.Attribute) and method_name(expr) in TENSOR_ONLY_METHODS:
        return True
    module, _, function = (imps.qualify(expr.func) or "").rpartition(".")
    return module == "torch" and function in TENSORS_FROM_DATA


def calls_after_discarded_move(idx: Index, moved: DiscardedMove) -> list[tuple[cst.Call, list[cst.BaseExpression]]]:
    """The calls after the thrown-away move, in its scope, with the arguments that still hold
    the unmoved tensor."""
    scope = idx.scope(moved.move)
    return calls_on_raw_data(idx, scope, {moved.name}, scope, after=idx.order(moved.move))


@dataclass(frozen=True)
class HostTensor:
    """`x = torch.tensor(data)` (or `torch.from_numpy(a).unsqueeze(0)`, a list of such
    conversions): a tensor that the script makes from data on the CPU."""

    statement: cst.Assign
    made: cst.Call


def host_conversion(expr: cst.BaseExpression, imps: Imports) -> cst.Call | None:
    """The conversion of data to a CPU tensor that made `expr` as it returned it: a `torch`
    conversion without a `device`, a tensor method of one that keeps it where it is, or the
    element of a list comprehension of them; None once anything else touched it."""
    if isinstance(expr, cst.ListComp):
        return host_conversion(expr.elt, imps)
    if not isinstance(expr, cst.Call):
        return None
    if isinstance(expr.func, cst.Attribute) and method_name(expr) in STAYS_PUT:
        inner = host_conversion(expr.func.value, imps)
        if inner is not None:
            return inner
    module, _, function = (imps.qualify(expr.func) or "").rpartition(".")
    if module != "torch" or function not in CPU_TENSOR_MAKERS:
        return None
    # `torch.as_tensor(x, dtype, device)` may place it positionally.
    if keyword(expr, "device") is not None or len(positional(expr)) != 1 or any(arg.star for arg in expr.args):
        return None
    return expr


def host_tensors(ctx: FileContext) -> list[HostTensor]:
    """The assignments of a module that bind tensors made from data on the CPU."""
    return ctx.analysis(_build_host_tensors)


def _build_host_tensors(ctx: FileContext) -> list[HostTensor]:
    imps = imports(ctx)
    if not imps.mentions("torch"):
        return []
    found: list[HostTensor] = []
    for assign in index(ctx).nodes(cst.Assign):
        made = host_conversion(assign.value, imps)
        names = [name.value for target in assign.targets for name in target_names(target.target)]
        # Sequence lengths stay on the host on purpose: `pack_padded_sequence` wants them there.
        if made is not None and not any(says_length(name) for name in names):
            found.append(HostTensor(assign, made))
    return found

