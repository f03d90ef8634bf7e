from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an

FACTORIES = frozenset(
    f"torch.{name}"
    for name in "zeros ones empty full arange rand randn randint randperm eye tensor linspace logspace".split()
)
# Methods that put their receiver where the model is.
MOVES = frozenset({"to", "cuda", "type_as"})
# Methods and builtins that bring a value back to the host: the tensor never meets the model.
HOST_READS = frozenset({"item", "tolist", "numpy", "cpu"})
HOST_BUILTINS = frozenset({"float", "int", "bool", "len", "list", "tuple", "range", "str"})
# Wrapping a tensor in these registers it with the module, which `.to(device)` moves.
REGISTERS = frozenset({"register_buffer", "Parameter", "register_parameter"})
DTYPES = frozenset(
    """float float32 float16 float64 half double bfloat16 long int int64 int32 int16 int8 uint8
    bool complex64 complex128 cfloat cdouble""".split()
)
MAX_FLOW = 3


class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Finds tensor factories (`torch.zeros`, `ones`, `empty`, `full`, `arange`, `rand`, `randn`,
    `randint`, `randperm`, `eye`, `tensor`, `linspace`, `logspace`) called without `device=`
    inside an `nn.Module`'s `forward` (or a method that `forward` calls through `self`), in a
    file that runs models on a device, when nothing moves the new tensor to the input's
    device afterwards.

    ## Why is this bad?
    A factory without `device=` allocates on the CPU. The module works in CPU tests and
    fails with "Expected all tensors to be on the same device" as soon as it runs on a GPU;
    worse, a buffer returned as output can silently drag the rest of the computation back
    to the CPU. `.to(device)` on the model moves parameters and buffers, never tensors
    created inside `forward`.

    ## Example
    ```python
    class PositionalEncoding(nn.Module):
        def forward(self, x):
            positions = torch.arange(x.size(1))
            return x + self.embedding(positions)
    ```

    ## Use instead
    ```python
    class PositionalEncoding(nn.Module):
        def forward(self, x):
            positions = torch.arange(x.size(1), device=x.device)
            return x + self.embedding(positions)
    ```
    or `x.new_zeros(...)`, `torch.zeros_like(x)`, or a buffer registered in `__init__`.
    Zero-dimensional tensors (`torch.tensor(1.0)`) are not reported: PyTorch lets a 0-dim
    CPU tensor take part in CUDA operations. Neither are tensors used only as indices
    (`x[torch.arange(n)]`) or read back on the host (`torch.randint(...).item()`).

    ## Fix safety
    The fix adds `device=x.device`, where `x` is `forward`'s first argument. It is unsafe:
    that argument may not be a tensor, or not the one whose device the result should follow.

    ## Runtime confirmation
    On a GPU, `torchlint probe` confirms it as TL101 device-mismatch.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#best-practices
    - https://pytorch.org/docs/stable/tensor_attributes.html#torch.device
    """

    CODE = "TL011"
    NAME = "factory-without-device"
    SUMMARY = "Tensor factory in `forward` without `device=` creates a CPU tensor"
    SEVERITY = Severity.WARNING
    TRIGGERS = (
        ("forward",),
        ("cuda", "device"),
        ("zeros", "ones", "empty", "full", "arange", "rand", "eye", "tensor", "linspace", "logspace"),
    )
    CONFIRMED_BY = ("TL101",)

    VALID = [
        # device= of an input.
        """
        import torch
        from torch import nn
        class Pos(nn.Module):
            def forward(self, x):
                pos = torch.arange(x.size(1), device=x.device)
                return x + self.emb(pos)
        model = Pos().cuda()
        """,
        # *_like and new_* factories inherit the device.
        """
        import torch
        import torch.nn as nn
        class Noise(nn.Module):
            def forward(self, x):
                mask = torch.ones_like(x)
                pad = x.new_zeros(x.size(0), 1)
                return torch.cat([x * mask, pad], dim=1)
        device = torch.device("cuda")
        """,
        # Moved right away, or later through a variable (the diffusers timestep embedding).
        """
        import math, torch
        from torch import nn
        class TimestepEmbedding(nn.Module):
            def forward(self, timesteps):
                half = self.dim // 2
                exponent = -math.log(10000) * torch.arange(half, dtype=torch.float32)
                emb = torch.exp(exponent / half).to(timesteps.device)
                mask = torch.triu(torch.ones(half, half)).cuda()
                scale = torch.rand(half)
                scale = scale.type_as(emb)
                return emb * scale
        """,
        # Zero-dimensional tensors mix with CUDA tensors.
        """
        import torch
        from torch import nn
        class Clamp(nn.Module):
            def forward(self, x):
                neg = torch.tensor(float("-inf"))
                return torch.where(x > 0, x, neg) * torch.tensor(0.5) + torch.zeros(())
        model = Clamp().to("cuda")
        """,
        # Used only as an index or read on the host (torchvision transforms).
        """
        import torch
        from torch import nn
        class RandomFlip(nn.Module):
            def forward(self, img):
                if torch.rand(1) < self.p:
                    img = img.flip(-1)
                i = torch.randint(0, 10, size=(1,)).item()
                idx = torch.randperm(img.size(0))
                return img[idx][torch.arange(img.size(0)) % 2 == 0], i
        x = x.cuda()
        """,
        # Buffers registered in __init__ move with the model.
        """
        import torch
        from torch import nn
        class Rotary(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

            def forward(self, x):
                t = torch.arange(x.shape[1]).type_as(self.inv_freq)
                return torch.outer(t, self.inv_freq)
        model = Rotary(64).to(device)
        """,
        # A CPU-only file: nothing says the model runs on a GPU.
        """
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x):
                return x + torch.zeros(x.size(1))
        """,
        # Not a module: autograd Functions and plain classes.
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * torch.ones(x.size(1))

        class Collator:
            def forward(self, items):
                return torch.tensor([len(i) for i in items])
        device = "cuda"
        """,
        # The factory lives outside forward (an init_hidden called by the training loop).
        """
        import torch
        from torch import nn
        class RNN(nn.Module):
            def init_hidden(self, bsz):
                return torch.zeros(self.nlayers, bsz, self.nhid)

            def forward(self, x, hidden):
                return self.rnn(x, hidden)
        hidden = model.init_hidden(32).to(device)
        """,
        # A helper that forward calls returns the tensor, and forward moves it.
        """
        import torch
        from torch import nn
        class Seq2Seq(nn.Module):
            def make_outputs(self, n, b):
                return torch.zeros(n, b, self.vocab)

            def forward(self, src):
                outputs = self.make_outputs(src.size(0), src.size(1)).to(self.device)
                return outputs
        """,
        # A default device set for the whole file.
        """
        import torch
        from torch import nn
        torch.set_default_device("cuda")
        class Net(nn.Module):
            def forward(self, x):
                return x + torch.randn(x.shape[-1])
        """,
        # torch.tensor of a tensor or of unknown data keeps its device or is a scalar.
        """
        import torch
        from torch import nn
        class Scaler(nn.Module):
            def forward(self, x, scale):
                return x * torch.tensor(scale) + torch.tensor(self.bias)
        model.cuda()
        """,
        # out= and **kwargs decide the device elsewhere.
        """
        import torch
        from torch import nn
        class Buf(nn.Module):
            def forward(self, x, **factory_kwargs):
                y = torch.empty(x.shape, **factory_kwargs)
                torch.zeros(x.shape, out=self.buffer)
                return y
        device = torch.device("cuda")
        """,
        # `.to(device=...)` after a dtype cast in the chain.
        """
        import torch
        from torch import nn
        class Mask(nn.Module):
            def forward(self, x):
                mask = torch.ones(x.size(1), x.size(1)).tril().bool().to(device=x.device)
                return x.masked_fill(~mask, 0.0)
        """,
    ]

    INVALID = [
        Example(
            """
            import torch
            from torch import nn
            class Pos(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1))  # expect: TL011
                    return x + self.emb(pos)
            model = Pos().cuda()
            """,
            fixed="""
            import torch
            from torch import nn
            class Pos(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1), device=x.device)  # expect: TL011
                    return x + self.emb(pos)
            model = Pos().cuda()
            """,
        ),
        # Aliased torch, a hidden state built in forward.
        Example(
            """
            import torch as T
            import torch.nn as nn
            class Encoder(nn.Module):
                def forward(self, inputs):
                    h0 = T.zeros(self.layers, inputs.size(0), self.hidden)  # expect: TL011
                    out, _ = self.gru(inputs, h0)
                    return out
            device = T.device("cuda" if T.cuda.is_available() else "cpu")
            """,
            fixed="""
            import torch as T
            import torch.nn as nn
            class Encoder(nn.Module):
                def forward(self, inputs):
                    h0 = T.zeros(self.layers, inputs.size(0), self.hidden, device=inputs.device)  # expect: TL011
                    out, _ = self.gru(inputs, h0)
                    return out
            device = T.device("cuda" if T.cuda.is_available() else "cpu")
            """,
        ),
        # Mixed straight into an expression.
        """
        import torch
        from torch import nn
        class AddNoise(nn.Module):
            def forward(self, x):
                return x + 0.1 * torch.randn(x.shape)  # expect: TL011
        model.to(device)
        """,
        # A multi-element tensor literal.
        """
        import torch
        from torch import nn
        class Boxes(nn.Module):
            def forward(self, boxes, w, h):
                scale = torch.tensor([w, h, w, h], dtype=torch.float32)  # expect: TL011
                return boxes * scale
        net = Boxes().cuda()
        """,
        # A method that forward calls through self.
        """
        import torch
        from torch.nn import Module
        class Decoder(Module):
            def causal_mask(self, n):
                return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)  # expect: TL011

            def forward(self, x):
                return self.attn(x, mask=self.causal_mask(x.size(1)))
        model = Decoder().to("cuda")
        """,
        # A cast to a dtype is not a move.
        """
        import torch
        from torch import nn
        class Timestep(nn.Module):
            def forward(self, t):
                freqs = torch.arange(self.half).to(torch.float32)  # expect: TL011
                return t[:, None] * freqs[None]
        model.cuda()
        """,
        # An output buffer filled in a loop (the seq2seq tutorial without `.to(device)`).
        """
        import torch
        import torch.nn as nn
        class Seq2Seq(nn.Module):
            def forward(self, src, trg):
                outputs = torch.zeros(trg.shape[0], trg.shape[1], self.vocab)  # expect: TL011
                for t in range(1, trg.shape[0]):
                    outputs[t] = self.decoder(trg[t - 1])
                return outputs
        device = torch.device("cuda")
        """,
        # A loss accumulator started on the CPU.
        """
        import torch
        from torch import nn
        class MultiLoss(nn.Module):
            def forward(self, preds, targets):
                total = torch.zeros(1)  # expect: TL011
                for p, t in zip(preds, targets):
                    total += self.crit(p, t)
                return total
        loss_fn = MultiLoss().cuda()
        """,
        # A LightningModule's forward, with an eye matrix.
        """
        import torch
        import lightning as L
        class Whiten(L.LightningModule):
            def forward(self, x):
                eye = torch.eye(x.size(-1))  # expect: TL011
                return x @ (eye + self.w)
        trainer = L.Trainer(accelerator="cuda")
        """,
        # A subclass of a local module class.
        """
        import torch
        from torch import nn
        class Base(nn.Module):
            pass

        class Sampler(Base):
            def forward(self, logits):
                u = torch.rand(logits.shape)  # expect: TL011
                return (logits - torch.log(-torch.log(u))).argmax(-1)
        model = Sampler().to(device)
        """,
        # Moving a different tensor does not move this one.
        """
        import torch
        from torch import nn
        class Attn(nn.Module):
            def forward(self, q, k):
                scores = (q @ k.transpose(-2, -1)).to(q.device)
                mask = torch.ones(q.size(1), k.size(1)).tril()  # expect: TL011
                return scores.masked_fill(mask == 0, float("-inf"))
        device = "cuda"
        """,
        # linspace through a chain of methods.
        """
        import torch
        from torch import nn
        class Grid(nn.Module):
            def forward(self, feats):
                ys = torch.linspace(-1, 1, feats.size(2)).view(1, -1, 1)  # expect: TL011
                return feats * ys
        model = Grid().cuda()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        if not _mentions_device(ctx) or _sets_default_device(ctx):
            return
        finder = _Finder(ctx)
        seen: set[int] = set()
        for forward, methods in finder.forwards():
            for method in methods:
                for call in finder.idx.within(method, cst.Call):
                    if id(call) in seen or not finder.is_factory(call):
                        continue
                    seen.add(id(call))
                    if finder.harmless(call):
                        continue
                    yield self._report(ctx, finder, call, forward, method)

    def _report(
        self, ctx: FileContext, finder: _Finder, call: cst.Call, forward: cst.FunctionDef, method: cst.FunctionDef
    ) -> Report:
        factory = ctx.module.code_for_node(call.func)
        owner = finder.funcs.enclosing_class(method)
        where = f"`{owner.name.value}.{method.name.value}`" if owner is not None else f"`{method.name.value}`"
        first = _first_input(forward)
        suggestion = f"device={first}.device" if first else "device=<input>.device"
        fix = None
        if first is not None and finder.idx.scope(call) is forward:
            device = cst.Arg(
                keyword=cst.Name("device"),
                value=cst.Attribute(cst.Name(first), cst.Name("device")),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
            args = list(call.args)
            if args:
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            fix = FixSpec(
                f"pass `{suggestion}`",
                ((call, call.with_changes(args=(*args, device))),),
                safe=False,
            )
        return self.report(
            call,
            f"`{factory}(...)` in {where} creates its tensor on the CPU while the model may run on a GPU: "
            f"pass `{suggestion}` (or use `x.new_*` / `torch.*_like`)",
            fix,
        )


def _mentions_device(ctx: FileContext) -> bool:
    """The file runs models somewhere other than the default device: CUDA, or any `device`."""
    if an.uses_cuda(ctx):
        return True
    idx = an.index(ctx)
    return any(node.value == "device" for node in idx.nodes(cst.Name))


def _sets_default_device(ctx: FileContext) -> bool:
    return any(
        an.callee_name(call) in ("set_default_device", "set_default_tensor_type")
        for call in an.index(ctx).nodes(cst.Call)
    )


def _first_input(forward: cst.FunctionDef) -> str | None:
    """`x` for `def forward(self, x, ...)`."""
    params = forward.params.params
    if len(params) >= 2 and params[0].name.value == "self":
        return params[1].name.value
    return None


class _Finder:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = an.index(ctx)
        self.imps = an.imports(ctx)
        self.funcs = an.functions(ctx)
        self._modules: dict[str, bool] = {}
        self.classes = {cls.name.value: cls for cls in self.idx.nodes(cst.ClassDef)}

    # -- where to look ----------------------------------------------------------

    def is_module_class(self, name: str, _seen: frozenset[str] = frozenset()) -> bool:
        if name in self._modules:
            return self._modules[name]
        cls = self.classes.get(name)
        result = False
        if cls is not None and name not in _seen:
            for base in cls.bases:
                qualified = self.imps.qualify(base.value) or ""
                if (
                    qualified.startswith(("torch.nn.", "nn."))
                    or qualified.endswith("LightningModule")
                    or self.is_module_class(an.last_name(base.value) or "", _seen | {name})
                ):
                    result = True
                    break
        self._modules[name] = result
        return result

    def forwards(self) -> Iterator[tuple[cst.FunctionDef, list[cst.FunctionDef]]]:
        """Each module class's `forward` with the methods it runs through `self`."""
        for name, methods in self.funcs.methods.items():
            forward = methods.get("forward")
            if forward is None or not self.is_module_class(name):
                continue
            yield forward, self._methods_run_by(forward)

    def _methods_run_by(self, forward: cst.FunctionDef) -> list[cst.FunctionDef]:
        found: dict[int, cst.FunctionDef] = {id(forward): forward}
        stack = [forward]
        while stack:
            current = stack.pop()
            for call in self.idx.within(current, cst.Call):
                owner = an.receiver(call)
                if not (isinstance(owner, cst.Name) and owner.value == "self"):
                    continue
                for method in self.funcs.resolve(call):
                    if id(method) not in found:
                        found[id(method)] = method
                        stack.append(method)
        return list(found.values())

    # -- what to report -----------------------------------------------------------

    def is_factory(self, call: cst.Call) -> bool:
        if self.imps.callee(call) not in FACTORIES:
            return False
        if any(arg.star for arg in call.args) or an.keyword(call, "device") or an.keyword(call, "out"):
            return False
        return not _zero_dim(call)

    def harmless(self, call: cst.Call) -> bool:
        """The tensor reaches the model's device, or never meets it."""
        return self._expr_harmless(call, 0)

    def _expr_harmless(self, start: cst.CSTNode, depth: int) -> bool:
        """Follow `start` (the factory call or a later use of what it was bound to) up through
        the expression that holds it, then through the name it is assigned to."""
        current: cst.CSTNode = start
        for parent in self.idx.ancestors(start):
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(parent, cst.Call) and parent is not start and self._moves_or_reads(parent, current):
                return True
            if isinstance(parent, cst.SubscriptElement):
                return True  # an index: PyTorch accepts CPU indices into CUDA tensors
            if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is current:
                return True
            if isinstance(parent, (cst.Return, cst.Expr)):
                return self._returned_harmless(parent, depth) if isinstance(parent, cst.Return) else False
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                return self._bound_harmless(parent, current, start, depth)
            if isinstance(parent, cst.BaseStatement) or isinstance(parent, cst.BaseSmallStatement):
                return False
            current = parent
        return False

    def _moves_or_reads(self, call: cst.Call, inner: cst.CSTNode) -> bool:
        """`call` moves `inner` (its receiver or an argument) to a device, registers it with the
        module, copies it into an existing tensor, or reads it on the host."""
        func = call.func
        if func is inner:
            assert isinstance(func, cst.Attribute)
            name = func.attr.value
            if name in HOST_READS:
                return True
            return name in MOVES and (name != "to" or not _dtype_only(call, self.imps))
        if not isinstance(inner, cst.Arg):
            return False
        name = an.callee_name(call)
        if name in REGISTERS or (an.method_name(call) == "copy_"):
            return True
        return name in HOST_BUILTINS and isinstance(func, cst.Name) and not self.imps.is_imported(func)

    def _bound_harmless(
        self, statement: cst.Assign | cst.AnnAssign | cst.AugAssign, value: cst.CSTNode, start: cst.CSTNode, depth: int
    ) -> bool:
        if isinstance(statement, cst.AugAssign) or statement.value is not value or depth >= MAX_FLOW:
            return False
        target = _bound_name(self.idx, statement, start)
        if target is None:
            return False
        scope = self.idx.scope(statement)
        after = self.idx.end(statement)
        uses = [
            use
            for use in an.mentions(self.idx, scope, target)
            if self.idx.order(use) > after and not isinstance(self.idx.parent(use), (cst.AssignTarget, cst.AnnAssign))
        ]
        harmless = [self._expr_harmless(use, depth + 1) for use in uses]
        # Moved somewhere later (`pos = pos.to(x.device)`), or used only harmlessly (or not at all).
        return all(harmless) or any(h and self._moved(use) for h, use in zip(harmless, uses))

    def _moved(self, use: cst.CSTNode) -> bool:
        """`use.to(device)`, `use.cuda()`, `register_buffer(name, use)`: this use moves the tensor."""
        parent = self.idx.parent(use)
        call = self.idx.parent(parent) if parent is not None else None
        if not isinstance(call, cst.Call):
            return False
        if call.func is parent:
            return an.method_name(call) in MOVES and self._moves_or_reads(call, parent)
        return isinstance(parent, cst.Arg) and an.callee_name(call) in REGISTERS

    def _returned_harmless(self, statement: cst.Return, depth: int) -> bool:
        """A helper method returns the tensor: harmless when every caller moves it."""
        method = self.idx.scope(statement)
        if not isinstance(method, cst.FunctionDef) or method.name.value == "forward" or depth >= MAX_FLOW:
            return False
        sites = [
            site
            for site in self.funcs.call_sites(method)
            if isinstance(an.receiver(site), cst.Name) and an.dotted(an.receiver(site)) == "self"  # type: ignore[arg-type]
        ]
        return bool(sites) and all(self._expr_harmless(site, depth + 1) for site in sites)


def _bound_name(idx: an.Index, statement: cst.Assign | cst.AnnAssign, origin: cst.CSTNode) -> str | None:
    """The dotted name that the value holding `origin` is stored in; for `a, b = x, y`, the
    target paired with the element that holds `origin`."""
    target = statement.targets[0].target if isinstance(statement, cst.Assign) else statement.target
    value = statement.value
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return None
        for t, v in zip(target.elements, value.elements):
            if idx.contains(v, origin):
                return an.dotted(t.value)
        return None
    return an.dotted(target)


def _zero_dim(call: cst.Call) -> bool:
    """`torch.tensor(1.0)`, `torch.zeros(())`, `torch.full((), v)`: 0-dim tensors mix with CUDA."""
    args = an.positional(call)
    short = an.last_name(call.func)
    if short == "tensor":
        data = args[0].value if args else None
        return not isinstance(data, (cst.List, cst.Tuple, cst.ListComp))
    size_kw = an.keyword(call, "size")
    shape = size_kw.value if size_kw is not None else (args[0].value if args and short in ("zeros", "ones", "empty", "full", "rand", "randn") else None)
    return isinstance(shape, (cst.Tuple, cst.List)) and not shape.elements


def _dtype_only(call: cst.Call, imps: an.Imports) -> bool:
    """`.to(torch.float32)`, `.to(x.dtype)`, `.to(dtype=...)`: a cast that stays on the device."""
    if an.keyword(call, "device") is not None:
        return False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in ("dtype", "non_blocking", "copy", "memory_format"):
                return False
            continue
        qualified = imps.qualify(arg.value) or ""
        is_dtype = (qualified.startswith("torch.") and qualified.count(".") == 1 and qualified[6:] in DTYPES) or (
            isinstance(arg.value, cst.Attribute) and arg.value.attr.value == "dtype"
        )
        if not is_dtype:
            return False
    return True
