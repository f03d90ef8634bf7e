"""Unit tests of `_analysis.devices`: where a tensor that a module's `forward` (or a helper
it runs) creates on the CPU goes."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.devices import ForwardFactories


def factories(source: str) -> tuple[ForwardFactories, list[cst.Call]]:
    text = textwrap.dedent(source)
    ctx = FileContext("model.py", text, cst.parse_module(text))
    finder = ForwardFactories(ctx)
    return finder, [c for c in an.index(ctx).nodes(cst.Call) if finder.is_factory(c)]


class TestUnpackedResults:
    """`a, b = f(cpu)` stores a part of the CPU tensor in every target."""

    @pytest.mark.parametrize(
        ("use", "reaches"),
        [
            ("return feats + torch.stack([xs, ys]).float()", True),
            ("return feats * ys", True),
            ("return feats + torch.stack([xs, ys]).to(feats.device)", False),
            ("return feats[ys.long(), xs.long()]", False),
        ],
    )
    def test_every_target_of_a_call_holds_the_tensor(self, use: str, reaches: bool) -> None:
        finder, (arange,) = factories(
            f"""
            import torch
            from torch import nn
            class Grid(nn.Module):
                def forward(self, feats):
                    rows = torch.arange(feats.size(2))
                    ys, xs = torch.meshgrid(rows, rows, indexing="ij")
                    {use}
            """
        )
        assert finder.reaches_device(arange) is reaches

    def test_a_literal_tuple_pairs_each_target_with_its_element(self) -> None:
        finder, (cpu,) = factories(
            """
            import torch
            from torch import nn
            class Pair(nn.Module):
                def forward(self, x):
                    noise, scale = torch.randn(x.shape), 2.0
                    return x * scale, noise
            """
        )
        # `noise` is returned, never mixed with `x`: only `scale` meets the input.
        assert not finder.reaches_device(cpu)

    def test_unpacked_in_a_helper_that_forward_reaches(self) -> None:
        finder, cpus = factories(
            """
            import torch
            from torch import nn
            class Loss(nn.Module):
                def forward(self, att, lengths):
                    return sum(self.mask(n) * att for n in lengths)

                def mask(self, n):
                    gx, gy = torch.meshgrid(torch.arange(n), torch.arange(n))
                    return (gx - gy).float() / n
            """
        )
        assert len(cpus) == 2 and all(finder.reaches_device(c) for c in cpus)


class TestRebuiltSince:
    """`Placements.rebuilt_since`: a fresh model bound to the name after a move is not on
    the accelerator."""

    @pytest.mark.parametrize(
        ("between", "rebuilt"),
        [
            ("net = Net()", True),
            ("net = torch.compile(net)", False),
            ("if fresh:\n    net = Net()", False),
            ("pass", False),
        ],
    )
    def test_the_binding_between_decides(self, between: str, rebuilt: bool) -> None:
        text = "import torch\nnet = Net()\nnet.to('cuda')\n" + between + "\nout = net(x)\n"
        ctx = FileContext("eval.py", text, cst.parse_module(text))
        place = an.placements(ctx)
        (move,) = place.models["net"]
        use = next(c.func for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "net")
        assert place.rebuilt_since(move, use) is rebuilt

    def test_a_move_of_the_fresh_model_is_its_own(self) -> None:
        text = "net = Net().cuda()\nnet = Net().cuda()\nout = net(x)\n"
        ctx = FileContext("eval.py", text, cst.parse_module(text))
        place = an.placements(ctx)
        first, second = place.models["net"]
        use = next(c.func for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "net")
        assert place.rebuilt_since(first, use)
        assert not place.rebuilt_since(second, use)


class TestFactoryMoves:
    """`Placements.models`: a name bound to what a local factory returns after moving it."""

    @pytest.mark.parametrize(
        ("body", "moved"),
        [
            ("return Net().cuda()", True),
            ("net = Net()\n    net.to(device)\n    return net", True),
            ("net = Net().to('cuda')\n    return net", True),
            ("return Net()", False),
            ("return Net().to(torch.float16)", False),
        ],
    )
    def test_the_factory_returns_the_model_it_moved(self, body: str, moved: bool) -> None:
        text = f"import torch\ndef build(device='cuda'):\n    {body}\nmodel = build()\nout = model(x)\n"
        ctx = FileContext("train.py", text, cst.parse_module(text))
        place = an.placements(ctx)
        assert ("model" in place.models) is moved
        if moved:
            use = next(c.func for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "model")
            assert not any(place.rebuilt_since(move, use) for move in place.models["model"])


class TestModuleLevelHelpers:
    """A module-level function that builds a tensor and returns it: its callers decide."""

    @pytest.mark.parametrize(
        ("use", "reaches"),
        [
            ("return feat + make_grid(h, w)", True),
            ("return feat + make_grid(h, w).to(feat.device)", False),
            ("grid = make_grid(h, w)\n                    return feat[grid.long()]", False),
        ],
    )
    def test_a_function_called_from_forward_returns_its_tensor_to_forward(self, use: str, reaches: bool) -> None:
        finder, (arange,) = factories(
            f"""
            import torch
            from torch import nn
            def make_grid(h, w):
                return torch.arange(h * w).view(h, w).float()
            class Head(nn.Module):
                def forward(self, feat):
                    h, w = feat.shape[-2:]
                    {use}
            """
        )
        assert finder.reaches_device(arange) is reaches

    def test_a_call_at_module_level_is_not_a_forward_use(self) -> None:
        finder, (arange,) = factories(
            """
            import torch
            from torch import nn
            def make_grid(h, w):
                return torch.arange(h * w).view(h, w).float()
            GRID = make_grid(4, 4)
            class Head(nn.Module):
                def forward(self, feat):
                    return feat + GRID
            """
        )
        assert not finder.reaches_device(arange)


class TestDeviceFollowingFunctions:
    """A function that creates tensors on an input's device is checked like a `forward`."""

    SOURCE = """
        import torch
        class Chain:
            def partition(self, potentials, lengths, scale=1.0):
                chart = torch.zeros(potentials.shape, device=potentials.device)
                steps = torch.arange(lengths.max().item(), device=lengths.device)
                init = torch.ones(potentials.shape).bool()
                return potentials.masked_fill(init, 0.0) + chart + steps.sum()
            def shapes(self, potentials):
                where = potentials.device
                return torch.ones(potentials.shape, device=where), potentials.device
        def host_copy(t):
            buf = torch.empty(t.size())
            buf.copy_(t)
            return buf, t.device
        """

    def functions(self, finder: ForwardFactories) -> dict[str, cst.FunctionDef]:
        return {f.name.value: f for f in finder.funcs.all}

    def test_the_parameters_whose_device_new_tensors_take(self) -> None:
        finder, _ = factories(self.SOURCE)
        funcs = self.functions(finder)
        assert finder.device_following(funcs["partition"]) == {"potentials", "lengths"}
        # A device read through a local name, or only returned, says nothing about the inputs.
        assert finder.device_following(funcs["shapes"]) == set()
        assert finder.device_following(funcs["host_copy"]) == set()

    def test_such_a_function_is_a_root_and_its_cpu_mask_meets_the_input(self) -> None:
        finder, calls = factories(self.SOURCE)
        roots = {f.name.value for f, _ in finder.forwards()}
        assert roots == {"partition"}
        reaching = [c for c in calls if finder.reaches_device(c)]
        assert [an.callee_name(c) for c in reaching] == ["ones"]


class TestPlacedByTheCallee:
    """A CPU tensor handed to a function, method or module of the project that moves it to a
    device before it reads it (`sm.placed_arguments`) is placed; an unknown callee's is not."""

    CLASSES = """
        import torch
        from torch import nn
        import vendor
        class Rotary(nn.Module):
            def forward(self, frame_indices, device):
                n = frame_indices.shape[1]
                frame_indices = frame_indices.to(device=device, dtype=torch.float32)
                return frame_indices[:, :n, None] * self.freqs
        class Table(nn.Module):
            def forward(self, frame_indices, device):
                return frame_indices[..., None] * self.freqs
        def place(kernel, x):
            return kernel[:, None].to(device=x.device)
        """

    def placed(self, body: str, attrs: str = "self.rope = Rotary()") -> list[str]:
        text = textwrap.dedent(self.CLASSES) + textwrap.dedent(
            f"""
            class Video(nn.Module):
                def __init__(self):
                    super().__init__()
                    {attrs}
                def place_here(self, ids, device):
                    return ids.cuda()
                def forward(self, x, ids):
                    return {body}
            """
        )
        ctx = FileContext("model.py", text, cst.parse_module(text))
        (call,) = (c for c in an.index(ctx).nodes(cst.Call) if ctx.module.code_for_node(c) == body)
        return [ctx.module.code_for_node(arg) for arg in sm.placed_arguments(ctx, call)]

    @pytest.mark.parametrize(
        ("body", "placed"),
        [
            ("self.rope(frame_indices=ids, device=x.device)", ["ids"]),
            ("self.rope(device=x.device, frame_indices=ids)", ["ids"]),
            ("self.rope(ids, x.device)", ["ids"]),
            ("self.rope.forward(ids, x.device)", ["ids"]),
            ("self.place_here(ids, x.device)", ["ids"]),
            ("place(ids, x)", ["ids"]),
            ("place(x=x, kernel=ids)", ["ids"]),
            ("vendor.place(ids, x)", []),  # an installed package's function: unknown
            ("self.unknown(ids, x.device)", []),
        ],
    )
    def test_the_arguments_the_callee_moves(self, body: str, placed: list[str]) -> None:
        assert self.placed(body) == placed

    @pytest.mark.parametrize(
        "attrs",
        [
            "self.rope = Table()",  # reads them as they are
            "self.rope = Rotary() if self.video else Table()",  # one of them does not move them
            "self.rope = vendor.Rotary()",
        ],
    )
    def test_a_module_that_may_not_move_them_does_not_place_them(self, attrs: str) -> None:
        assert self.placed("self.rope(frame_indices=ids, device=x.device)", attrs) == []

    @pytest.mark.parametrize(("rope", "reaches"), [("Rotary", False), ("Table", True)])
    def test_factory_handed_to_a_module_attribute(self, rope: str, reaches: bool) -> None:
        finder, (arange,) = factories(
            textwrap.dedent(self.CLASSES)
            + textwrap.dedent(
                f"""
                class Video(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.rope = {rope}()
                    def forward(self, x):
                        ids = torch.arange(x.shape[1]).unsqueeze(0)
                        return x * self.rope(frame_indices=ids, device=x.device)
                """
            )
        )
        assert finder.reaches_device(arange) is reaches


class TestTheTensorMeetsItself:
    """`gauss / gauss.sum()`: the CPU tensor combined with itself meets no device tensor, even
    where its name also holds one on other paths (a device-following helper)."""

    @pytest.mark.parametrize(
        ("use", "reaches"),
        [
            ("return gauss / gauss.sum(-1, keepdim=True)", False),
            ("return gauss / sigma.sum()", True),
            ("return gauss * x[gauss.long()]", True),
        ],
    )
    def test_a_tensor_divided_by_itself(self, use: str, reaches: bool) -> None:
        finder, (cpu,) = factories(
            f"""
            import torch
            def gaussian(window, sigma):
                ramp = torch.arange(window, device=sigma.device)
                x = sigma.new_ones(window)
                if isinstance(sigma, float):
                    sigma = torch.tensor([[sigma]])
                gauss = torch.exp(-ramp / sigma.pow(2.0))
                {use}
            """
        )
        assert finder.reaches_device(cpu) is reaches


def wraps_of(source: str) -> tuple[an.ParallelWraps, FileContext]:
    text = textwrap.dedent(source)
    ctx = FileContext("train.py", text, cst.parse_module(text))
    return an.parallel_wraps(ctx), ctx


def move_of(ctx: FileContext, spelled: str) -> cst.Call:
    return next(c for c in an.index(ctx).nodes(cst.Call) if ctx.module.code_for_node(c) == spelled)


class TestParallelWraps:
    """Whether every path through a model's move also wraps the model in a wrapper that puts
    its inputs on its devices."""

    @pytest.mark.parametrize(
        ("setup", "wrapped"),
        [
            ("model = nn.DataParallel(Net()).cuda()", True),
            ("model = Net().cuda()\nmodel = nn.DataParallel(model)", True),
            ("model = Net().cuda()\nmodel = DDP(model, device_ids=[gpu])", True),
            ("model = Net().cuda()\nif torch.cuda.device_count() > 1:\n    model = nn.DataParallel(model)", False),
            ("model = Net().cuda()\nif args.distributed:\n    model = DDP(model)\nelif n > 1:\n    model = nn.DataParallel(model)", False),
            ("model = Net().cuda()\nif args.distributed:\n    model = DDP(model)\nelse:\n    model = nn.DataParallel(model)", True),
            ("model = Net().cuda()\nmodel = DDP(model) if args.distributed else model", False),
            ("model = Net().cuda()\nother = nn.DataParallel(net)", False),
        ],
    )
    def test_the_wrap_on_every_path_through_the_move(self, setup: str, wrapped: bool) -> None:
        wraps, ctx = wraps_of(setup + "\n")
        (move,) = an.placements(ctx).models["model"]
        assert wraps.always_wrapped(move) is wrapped

    def test_a_move_and_its_wrap_on_the_same_branch(self) -> None:
        wraps, ctx = wraps_of(
            """
            if args.gpu is not None:
                model = model.cuda(args.gpu)
            elif args.distributed:
                model.cuda()
                model = DDP(model)
            else:
                model = nn.DataParallel(model).cuda()
            """
        )
        assert not wraps.always_wrapped(move_of(ctx, "model.cuda(args.gpu)"))
        assert wraps.always_wrapped(move_of(ctx, "model.cuda()"))
        assert wraps.always_wrapped(move_of(ctx, "nn.DataParallel(model).cuda()"))

    @pytest.mark.parametrize(
        ("source", "out_of_sight"),
        [
            ("model = Net().cuda()\n", False),
            ("model = Net().cuda()\nif isinstance(model, nn.DataParallel):\n    model = model.module\n", True),
            ("from torch.nn import DataParallel\nmodel = Net().cuda()\n", True),
            ("model = Net().cuda()\nif n > 1:\n    model = nn.DataParallel(model)\n", False),
            ("model = Net().cuda()\nnet = nn.DataParallel(build())\n", True),
        ],
    )
    def test_a_wrapper_named_but_no_wrap_of_a_moved_model(self, source: str, out_of_sight: bool) -> None:
        wraps, _ = wraps_of(source)
        assert wraps.out_of_sight() is out_of_sight

    def test_the_wraps_a_path_through_the_move_may_take(self) -> None:
        wraps, ctx = wraps_of(
            """
            if args.gpu is not None:
                model = model.cuda(args.gpu)
            else:
                model.cuda()
                if n > 1:
                    model = nn.DataParallel(model)
            """
        )
        assert wraps.wraps_of(move_of(ctx, "model.cuda(args.gpu)")) == []
        assert [ctx.module.code_for_node(w) for w in wraps.wraps_of(move_of(ctx, "model.cuda()"))] == ["nn.DataParallel(model)"]
        assert not wraps.always_wrapped(move_of(ctx, "model.cuda()"))
