"""Unit tests of the analysis library's concepts, one class per module of
`torchlint.rules._analysis` (the index, dataflow and execution order have their own files:
test_index.py, test_reaching.py, test_loop_order.py)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an
from torchlint.rules._analysis.devices import ForwardFactories


def context(source: str, filename: str = "train.py") -> FileContext:
    text = textwrap.dedent(source)
    return FileContext(filename, text, cst.parse_module(text))


def calls_named(ctx: FileContext, name: str) -> list[cst.Call]:
    return [c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == name]


def code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


class TestNames:
    def test_aliases_resolve_to_qualified_names(self) -> None:
        ctx = context(
            """
            import torch as T
            import torch.nn.functional as F
            from torch import optim
            from time import perf_counter as now
            from .helpers import clear
            T.cuda.synchronize()
            F.relu(x)
            optim.SGD(p)
            now()
            clear(opt)
            model.eval()
            """
        )
        imps = an.imports(ctx)
        callees = [imps.callee(c) for c in an.index(ctx).nodes(cst.Call) if code(ctx, c) != "p"]
        assert callees == [
            "torch.cuda.synchronize",
            "torch.nn.functional.relu",
            "torch.optim.SGD",
            "time.perf_counter",
            ".helpers.clear",
            "model.eval",
        ]
        assert imps.mentions("torch.optim") and not imps.mentions("torchvision")

    def test_dotted_and_last_name(self) -> None:
        expr = cst.parse_expression("self.models[0].encoder")
        assert an.dotted(expr) is None
        assert an.last_name(expr) == "encoder"
        assert an.dotted(cst.parse_expression("a.b.c")) == "a.b.c"
        assert an.last_name(cst.parse_expression("self.xs[i]")) == "xs"
        assert an.dotted(cst.parse_expression("step")) == "step"
        assert an.dotted(cst.parse_expression("f().b")) is None and an.last_name(cst.parse_expression("f()")) is None
        assert an.last_name(cst.parse_expression("grads[0][1]")) == "grads"

    def test_enclosing_loops_stop_at_the_function(self) -> None:
        code = """
            while running:
                for batch in loader:
                    def helper():
                        for item in batch:
                            emit(item)
                    for x in prepare(batch):
                        log(x)
            """
        idx = an.index(context(code))
        call = {an.callee_name(c): c for c in idx.nodes(cst.Call)}
        loops = {an.dotted(loop.iter) if isinstance(loop, cst.For) else "while": loop for loop in idx.nodes(cst.For, cst.While)}
        assert an.enclosing_loops(idx, call["emit"]) == [loops["batch"]]  # not the loops around `helper`
        assert an.enclosing_loops(idx, call["log"]) == [loops[None], loops["loader"], loops["while"]]
        # The iterable runs once per iteration of the loops around its loop, not of its own.
        assert an.enclosing_loops(idx, call["prepare"]) == [loops["loader"], loops["while"]]

    def test_string_text_of_f_strings_and_concatenations(self) -> None:
        assert an.string_text(cst.parse_expression('f"cuda:{rank}"')) == "cuda:{}"
        assert an.string_text(cst.parse_expression('"cu" "da"')) == "cuda"
        assert an.string_text(cst.parse_expression("name")) is None

    def test_mentions_spell_the_object_and_its_attributes(self) -> None:
        ctx = context(
            """
            def f(self):
                self.loader.sampler.set_epoch(1)
                loader = 3
                other.loader = 4
            """
        )
        scope = an.index(ctx).nodes(cst.FunctionDef)[0]
        found = [code(ctx, n) for n in an.mentions(an.index(ctx), scope, "self.loader")]
        assert found == ["self.loader"]

    def test_calls_to_needs_the_import_unless_spelled_bare(self) -> None:
        ctx = context(
            """
            from torch.utils.data import DataLoader
            import mylib
            DataLoader(ds)
            mylib.DataLoader(ds)
            """
        )
        found = an.calls_to(ctx, frozenset({"torch.utils.data.DataLoader"}), frozenset({"DataLoader"}))
        assert [code(ctx, c) for c in found] == ["DataLoader(ds)"]


class TestCalls:
    def test_first_argument_by_keyword_or_first_position(self) -> None:
        def first(text: str) -> str | None:
            found = an.first_argument(cst.parse_expression(text), "mode")  # type: ignore[arg-type]
            return cst.Module([]).code_for_node(found) if found is not None else None

        assert first("m.train(False)") == "False" and first("m.train(mode=flag)") == "flag"
        assert first("m.train()") is None and first("m.train(a, mode=b)") == "b"

    def test_parts_of_a_call(self) -> None:
        call = cst.ensure_type(cst.parse_expression("opt.step(closure, lr=0.1, *more)"), cst.Call)
        assert an.method_name(call) == "step"
        assert an.dotted(an.receiver(call) or cst.Name("x")) == "opt"
        assert [code_of(a.value) for a in an.positional(call)] == ["closure"]
        arg = an.keyword(call, "lr")
        assert arg is not None and code_of(arg.value) == "0.1"
        assert an.keyword(call, "momentum") is None

    def test_arguments_bind_to_parameters_of_methods_and_functions(self) -> None:
        ctx = context(
            """
            class Trainer:
                def run(self, model, loader, mode="train"):
                    pass
                @staticmethod
                def util(a, b):
                    pass
            def evaluate(model, /, loader, *, steps=1):
                pass
            t.run(net, val_loader, mode="eval")
            Trainer.util(1, 2)
            evaluate(net, loader=dl, steps=3)
            """
        )
        funcs = an.functions(ctx)
        run, util, evaluate = (funcs.by_name[n][0] for n in ("run", "util", "evaluate"))
        site_run, site_util, site_eval = an.index(ctx).nodes(cst.Call)[-3:]

        def bound(func: cst.FunctionDef, call: cst.Call) -> dict[str, str]:
            return {k: code_of(v) for k, v in an.bind_arguments(funcs, func, call).items()}

        assert bound(run, site_run) == {"model": "net", "loader": "val_loader", "mode": '"eval"'}
        assert bound(util, site_util) == {"a": "1", "b": "2"}
        assert bound(evaluate, site_eval) == {"model": "net", "loader": "dl", "steps": "3"}
        assert an.parameter_names(evaluate) == {"model", "loader", "steps"}

    def test_called_module(self) -> None:
        shapes = {
            "model(x)": "model",
            "model.forward(x)": "model",
            "self.encoder(x)": "self.encoder",
            "batch.values()": None,
        }
        for text, expected in shapes.items():
            found = an.called_module(cst.ensure_type(cst.parse_expression(text), cst.Call))
            assert (code_of(found) if found is not None else None) == expected, text


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


class TestCallGraph:
    SOURCE = """
        class Base:
            def step_all(self):
                self.clear()
            def clear(self):
                pass
        class Trainer(Base):
            def fit(self):
                while True:
                    self.train_epoch()
            def train_epoch(self):
                self.step_all()
        def helper():
            inner()
        def inner():
            pass
        Trainer().fit()
        helper()
        """

    def test_self_calls_resolve_through_base_classes(self) -> None:
        ctx = context(self.SOURCE)
        funcs = an.functions(ctx)
        step_all_call = [c for c in an.index(ctx).nodes(cst.Call) if an.method_name(c) == "step_all"][0]
        assert [f.name.value for f in funcs.resolve(step_all_call)] == ["step_all"]
        assert funcs.method("Trainer", "clear") is funcs.by_name["clear"][0]

    def test_reachable_is_transitive(self) -> None:
        ctx = context(self.SOURCE)
        funcs = an.functions(ctx)
        fit = funcs.by_name["fit"][0]
        names = {f.name.value for f in funcs.reachable(fit) if isinstance(f, cst.FunctionDef)}
        assert names == {"fit", "train_epoch", "step_all", "clear"}

    def test_call_sites_include_calls_on_other_objects(self) -> None:
        ctx = context(self.SOURCE)
        funcs = an.functions(ctx)
        fit = funcs.by_name["fit"][0]
        assert [code(ctx, c) for c in funcs.call_sites(fit)] == ["Trainer().fit()"]
        assert [code(ctx, c) for c in funcs.call_sites(funcs.by_name["inner"][0])] == ["inner()"]


class TestPassedFunctions:
    def test_a_closure_passed_to_a_call(self) -> None:
        ctx = context(
            """
            def train_step(optimizer, x):
                def closure():
                    return loss_of(x)
                optimizer.step(closure)
                optimizer.step()
            """
        )
        funcs = an.functions(ctx)
        with_closure, plain = [c for c in an.index(ctx).nodes(cst.Call) if an.method_name(c) == "step"]
        assert [f.name.value for f in funcs.passed_functions(with_closure)] == ["closure"]
        assert funcs.passed_functions(plain) == []


class TestVocabulary:
    @pytest.mark.parametrize(
        ("name", "says"),
        [
            ("optimizer", True),
            ("optimizerG", True),
            ("d_opt", True),
            ("opt_scheduler", False),
            ("lr_scheduler", False),
            ("scaler", False),
            ("options", False),
        ],
    )
    def test_name_says_optimizer(self, name: str, says: bool) -> None:
        assert an.name_says_optimizer(name) is says

    def test_tokens_split_case_and_digits(self) -> None:
        assert an.name_tokens("optimizerG") == ["optimizer", "g"]
        assert an.name_tokens("FusedAdam") == ["fused", "adam"]
        assert an.name_tokens("d_opt2") == ["d", "opt", "2"]

    def test_evaluation_names_and_host_names(self) -> None:
        assert an.name_says_evaluation("validate_epoch") and an.name_says_evaluation("run_val")
        assert not an.name_says_evaluation("train_epoch") and not an.name_says_evaluation("interval")
        assert an.says_host("x_host") and an.says_host("cpu_mask") and not an.says_host("cpus_count")

    def test_optimizer_classes(self) -> None:
        assert an.is_optimizer_class("FusedAdam") and an.is_optimizer_class("AdamW")
        assert not an.is_optimizer_class("adam") and not an.is_optimizer_class("SchedulerAdam")

    @pytest.mark.parametrize(
        ("path", "is_test"),
        [("tests/test_model.py", True), ("pkg/model_test.py", True), ("conftest.py", True), ("src/attest.py", False)],
    )
    def test_test_files(self, path: str, is_test: bool) -> None:
        assert an.is_test_file(context("x = 1\n", filename=path)) is is_test


class TestTraining:
    def test_events_and_the_optimizer_each_step_steps(self) -> None:
        ctx = context(
            """
            import torch
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            scaler = torch.cuda.amp.GradScaler()
            sched = torch.optim.lr_scheduler.StepLR(optimizer, 1)
            for x in loader:
                optimizer.zero_grad()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                sched.step()
                for p in model.parameters():
                    p.grad = None
            """
        )
        t = an.training(ctx)
        assert [code(ctx, b) for b in t.backward] == ["scaler.scale(loss).backward()"]
        assert [code(ctx, s) for s in t.steps] == ["scaler.step(optimizer)"]
        assert [code_of(t.optimizer_of(s)) for s in t.steps] == ["optimizer"]
        assert [code(ctx, c).strip() for c in t.clears] == ["optimizer.zero_grad()", "p.grad = None"]
        assert t.models == {"optimizer": "model"}

    def test_results_of_an_optimizer_factory_are_what_their_names_say(self) -> None:
        ctx = context(
            """
            optimizer, scheduler = init_optimizer(model)
            lr_sched = build_optimizer(cfg)
            opt = create_optimizer(model)
            for x in loader:
                opt.step()
                scheduler.step()
                lr_sched.step()
            """
        )
        t = an.training(ctx)
        assert set(t.models) == {"optimizer", "opt"}
        assert [code(ctx, s) for s in t.steps] == ["opt.step()"]

    def test_a_gan_clear_of_the_other_optimizer_does_not_count(self) -> None:
        ctx = context(
            """
            opt_g = Adam(gen.parameters())
            opt_d = Adam(disc.parameters())
            opt_d.zero_grad()
            opt_g.step()
            opt_d.step()
            """
        )
        t = an.training(ctx)
        step_g = next(s for s in t.steps if code_of(t.optimizer_of(s)) == "opt_g")
        step_d = next(s for s in t.steps if code_of(t.optimizer_of(s)) == "opt_d")
        clear = t.clears[0]
        assert not t.clears_gradients_of(clear, step_g)
        assert t.clears_gradients_of(clear, step_d)

    @pytest.mark.parametrize(
        ("text", "loss"),
        [
            ("loss.backward()", "loss"),
            ("scaler.scale(loss).backward()", "loss"),
            ("accelerator.backward(loss)", "loss"),
            ("torch.autograd.backward(loss)", "loss"),
            ("out.backward(grad)", "out"),
        ],
    )
    def test_backpropagated_tensor(self, text: str, loss: str) -> None:
        ctx = context(f"import torch\n{text}\n")
        call = next(c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == "backward")
        found = an.backpropagated(call, an.imports(ctx))
        assert found is not None and code_of(found) == loss

    def test_graph_replays_of_captures_that_run_a_backward(self) -> None:
        ctx = context(
            """
            import torch
            g, h = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                model(x).sum().backward()
            with torch.cuda.graph(h):
                y = model(x)
            g.replay()
            h.replay()
            """
        )
        assert [code(ctx, c) for c in an.graph_replays(ctx)] == ["g.replay()"]

    def test_framework_iterations_are_manual_lightning_training_steps(self) -> None:
        ctx = context(
            """
            class Manual(LightningModule):
                def __init__(self):
                    self.automatic_optimization = False
                def training_step(self, batch, i):
                    pass
            class Automatic(LightningModule):
                def training_step(self, batch, i):
                    pass
            """
        )
        found = an.framework_iterations(ctx)
        assert [an.functions(ctx).enclosing_class(f.func).name.value for f in found] == ["Manual"]  # type: ignore[union-attr]
        assert [f.runner for f in found] == ["Lightning"]

    def test_each_item_of_a_collection_of_optimizers_is_an_optimizer(self) -> None:
        ctx = context(
            """
            for x in loader:
                model(x).backward()
                for opt in optimizers:
                    opt.step()
                for o in self.optims:
                    o.step()
                for env in envs:
                    env.step()
            """
        )
        assert [code(ctx, s) for s in an.training(ctx).steps] == ["opt.step()", "o.step()"]

    def test_a_call_of_the_modules_own_backward_wrapper_is_not_a_backward_pass(self) -> None:
        ctx = context(
            """
            class Trainer:
                def backward(self, loss):
                    self.scaler.scale(loss).backward()
                def fit(self, loss):
                    self.backward(loss)
                    self.engine.backward(loss)
            """
        )
        found = [code(ctx, c) for c in an.training(ctx).backward]
        assert found == ["self.scaler.scale(loss).backward()", "self.engine.backward(loss)"]

    def test_framework_iterations_include_the_function_an_ignite_engine_runs(self) -> None:
        ctx = context(
            """
            from ignite.engine import Engine
            def make(model, optimizer):
                def update(engine, batch):
                    pass
                def log(engine):
                    pass
                trainer = Engine(update)
                trainer.add_event_handler("EPOCH_COMPLETED", log)
                return trainer
            """
        )
        found = an.framework_iterations(ctx)
        assert [(f.func.name.value, f.runner) for f in found] == [("update", "ignite's `Engine`")]

    def test_unwrap_iterable(self) -> None:
        expr = cst.parse_expression("enumerate(tqdm(train_loader), 1)")
        assert code_of(an.unwrap_iterable(expr)) == "train_loader"
        for xla in ("pl.ParallelLoader(train_loader, [device]).per_device_loader(device)", "pl.MpDeviceLoader(train_loader, device)"):
            assert code_of(an.unwrap_iterable(cst.parse_expression(xla))) == "train_loader"

    def test_xla_optimizer_step_is_a_step_of_its_optimizer(self) -> None:
        ctx = context(
            """
            import torch_xla.core.xla_model as xm
            from lightning_like import optimizer_step
            xm.optimizer_step(optimizer)
            optimizer_step(optimizer)
            """
        )
        train = an.training(ctx)
        assert [code_of(s) for s in train.steps] == ["xm.optimizer_step(optimizer)"]


class TestModes:
    def test_grad_free_spellings(self) -> None:
        ctx = context(
            """
            import torch
            with torch.no_grad():
                a()
            with torch.inference_mode():
                b()
            with torch.set_grad_enabled(False):
                c()
            with torch.set_grad_enabled(True):
                d()
            with torch.enable_grad():
                e()
            @torch.no_grad()
            def f():
                g()
            """
        )
        idx, imps = an.index(ctx), an.imports(ctx)
        free = {an.callee_name(c): an.in_grad_free_block(idx, c, imps) for c in idx.nodes(cst.Call) if len(an.callee_name(c) or "") == 1}
        assert free == {"a": True, "b": True, "c": True, "d": False, "e": False, "g": True}

    def test_mode_calls_skip_runners_and_local_procedures(self) -> None:
        ctx = context(
            """
            def train(model):
                pass
            model.eval()
            model.train()
            model.train(False)
            model.train(mode=flag)
            trainer.train()
            train(model)
            """
        )
        found = [(code_of(m.target), m.mode) for m in an.mode_calls(ctx)]
        assert found == [("model", "eval"), ("model", "train"), ("model", "eval"), ("model", "either")]

    def test_model_key_sees_through_wrappers(self) -> None:
        for text in ("model", "self.model", "model.module", "model._orig_mod"):
            assert an.model_key(cst.parse_expression(text)) == "model", text
        assert an.wrapped_model(cst.parse_expression("nn.DataParallel(net)")) == "net"
        assert an.wrapped_model(cst.parse_expression("torch.compile(net, mode='max')")) == "net"
        assert an.wrapped_model(cst.parse_expression("wrap(net)")) is None

    def test_runs_with_gradients_outside_no_grad(self) -> None:
        ctx = context(
            """
            import torch
            def f(model, head, x):
                y = model(x)
                with torch.no_grad():
                    z = head(x)
                model.eval()
            """
        )
        scope = an.index(ctx).nodes(cst.FunctionDef)[0]
        found = [code_of(e) for e in an.runs_with_gradients(an.index(ctx), an.imports(ctx), scope)]
        assert "model" in found and "head" not in found


class TestDevices:
    @pytest.mark.parametrize(
        ("source", "uses"),
        [
            ("x = x.cuda()\n", True),
            ("x = x.to('cuda:0')\n", True),
            ("dist.init_process_group('nccl')\n", True),
            ("ok = torch.cuda.is_available()\n", False),
            ("choices = ['cuda', 'cpu']\n", False),
            ('"""Runs on cuda if you ask."""\n', False),
        ],
    )
    def test_uses_cuda(self, source: str, uses: bool) -> None:
        assert an.uses_cuda(context(source)) is uses


class TestFixes:
    def test_insert_statement_into_a_block(self) -> None:
        ctx = context(
            """
            for x in loader:
                step(x)
            """
        )
        loop = an.index(ctx).nodes(cst.For)[0]
        replacement = an.insert_statement(loop.body, 0, "optimizer.zero_grad()")
        assert replacement is not None
        old, new = replacement
        assert ctx.module.deep_replace(old, new).code == "\nfor x in loader:\n    optimizer.zero_grad()\n    step(x)\n"

    def test_one_line_suites_are_left_alone(self) -> None:
        ctx = context("for x in loader: step(x)\n")
        loop = an.index(ctx).nodes(cst.For)[0]
        assert an.insert_statement(loop.body, 0, "pass") is None


class TestForwardFactories:
    SOURCE = """
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x):
                mask = torch.ones(x.shape[0])
                pos = torch.arange(10)
                scale = torch.randn(4).to(x.device)
                n = torch.zeros(3).sum().item()
                return x * mask + self.emb(pos) * scale + n
        model = Net().cuda()
        """

    def fates(self) -> dict[str, bool]:
        ctx = context(self.SOURCE)
        finder = ForwardFactories(ctx)
        found = {}
        for _, methods in finder.forwards():
            for method in methods:
                for call in an.index(ctx).within(method, cst.Call):
                    if finder.is_factory(call):
                        found[code(ctx, call.func)] = finder.reaches_device(call)
        return found

    def test_a_cpu_tensor_that_meets_the_input_or_a_submodule_reaches_the_device(self) -> None:
        assert self.fates() == {
            "torch.ones": True,  # multiplied with the input
            "torch.arange": True,  # fed to a submodule
            "torch.randn": False,  # moved with .to(x.device)
            "torch.zeros": False,  # read back on the host
        }

    def test_positional_parameters_skip_a_bound_self(self) -> None:
        ctx = context("class A:\n    def f(self, x, /, y, *, z):\n        pass\n")
        func = an.index(ctx).nodes(cst.FunctionDef)[0]
        assert [p.name.value for p in an.positional_parameters(func, bound_self=True)] == ["x", "y"]
        assert [p.name.value for p in an.positional_parameters(func, bound_self=False)] == ["self", "x", "y"]


class TestPlacements:
    def test_models_moved_to_an_accelerator(self) -> None:
        ctx = context(
            """
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = Net().to(device)
            head = Head().cuda()
            probe = Probe().to("cpu")
            weights = w.to(torch.float16)
            """
        )
        assert sorted(an.placements(ctx).models) == ["head", "model"]

    @pytest.mark.parametrize(
        ("text", "moves"),
        [
            ("x.to(device)", True),
            ("x.cuda()", True),
            ("send_to_device(batch)", True),
            ("prepare(batch, gpu)", True),
            ("torch.cat(xs, dim=1)", False),
            ("x.float()", False),
        ],
    )
    def test_calls_that_may_move_data(self, text: str, moves: bool) -> None:
        call = cst.ensure_type(cst.parse_expression(text), cst.Call)
        assert an.Placements.is_data_move(call) is moves


class TestLoaderData:
    def test_the_loader_a_loop_iterates(self) -> None:
        ctx = context(
            """
            from tqdm import tqdm
            bar = tqdm(train_loader)
            for x in enumerate(bar):
                pass
            for x in items:
                pass
            for x in DataLoader(ds):
                pass
            """
        )
        data = an.loader_data(ctx)
        loops = an.index(ctx).nodes(cst.For)
        found = [data.loader(loop.iter) for loop in loops]
        assert [code(ctx, f) if f is not None else None for f in found] == ["bar", None, "DataLoader(ds)"]

    def test_data_built_on_the_device_or_moved_by_a_hook(self) -> None:
        prepared = context(
            """
            ds = TensorDataset(x.cuda(), y.cuda())
            loader = DataLoader(ds)
            for xb, yb in loader:
                pass
            """
        )
        loop = an.index(prepared).nodes(cst.For)[0]
        assert an.loader_data(prepared).iterable_prepared(loop)
        hooked = context(
            """
            class Data(Dataset):
                def __getitem__(self, i):
                    return self.x[i].to(self.device)
            """
        )
        assert an.loader_data(hooked).moved_by_hooks()
        plain = context(
            """
            class Data(Dataset):
                def __getitem__(self, i):
                    return self.x[i]
            """
        )
        assert not an.loader_data(plain).moved_by_hooks()


class TestAmp:
    @pytest.mark.parametrize(
        ("text", "fp16"),
        [
            ("torch.autocast('cuda')", True),
            ("torch.autocast(device_type='cuda', dtype=torch.float16)", True),
            ("torch.cuda.amp.autocast()", True),
            ("torch.autocast('cuda', dtype=torch.bfloat16)", False),
            ("torch.autocast('cpu')", False),
            ("torch.autocast('cuda', enabled=False)", False),
        ],
    )
    def test_float16_autocast_spellings(self, text: str, fp16: bool) -> None:
        ctx = context(f"import torch\nwith {text}:\n    y = model(x)\n")
        call = next(c for c in an.index(ctx).nodes(cst.Call) if "autocast" in code(ctx, c.func))
        assert an.amp(ctx).is_fp16_autocast(call) is fp16

    def test_a_scaler_stepped_without_update(self) -> None:
        ctx = context(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")
            for x in loader:
                with torch.autocast("cuda"):
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
            """
        )
        [step] = an.training(ctx).steps
        assert an.amp(ctx).steps_without_update(step)


class TestGraphs:
    @pytest.mark.parametrize(
        ("text", "no_graph"),
        [
            ("loss.item()", True),
            ("loss.detach().cpu()", True),
            ("float(loss)", True),
            ("loss.data", True),
            ("0.0", True),
            ("loss", False),
            ("loss * x.size(0)", False),
            ("criterion(out, y)", False),
        ],
    )
    def test_values_without_autograd_history(self, text: str, no_graph: bool) -> None:
        assert an.no_graph(cst.parse_expression(text)) is no_graph

    def test_what_a_backward_pass_consumes(self) -> None:
        ctx = context(
            """
            def step(model, x, y):
                ce = criterion(model(x), y)
                kl = divergence(model)
                loss = ce + 0.1 * kl
                total = loss / accum
                total.backward()
                logged = ce.item()
            """
        )
        scope = an.index(ctx).nodes(cst.FunctionDef)[0]
        found = an.backpropagated_names(ctx, an.index(ctx), scope)
        assert found.direct == {"total"}
        assert {"loss", "ce", "kl"} <= found.terms and "accum" not in found.terms
        assert {"loss", "ce", "kl", "model", "x", "y"} <= found.flowing and "logged" not in found.flowing

    def test_a_helper_that_returns_the_loss_it_back_propagated(self) -> None:
        ctx = context(
            """
            def step(model, x):
                loss = model(x).sum()
                loss.backward()
                return loss
            def step_item(model, x):
                loss = model(x).sum()
                loss.backward()
                return loss.item()
            """
        )
        funcs = an.functions(ctx)
        assert an.returns_backpropagated_loss(ctx, funcs.by_name["step"][0])
        assert not an.returns_backpropagated_loss(ctx, funcs.by_name["step_item"][0])

    def test_a_call_of_a_step_helper_that_returns_its_back_propagated_loss(self) -> None:
        ctx = context(
            """
            class Trainer:
                def step(self, x):
                    loss = self.model(x).sum()
                    loss.backward()
                    return loss
                def step_item(self, x):
                    loss = self.model(x).sum()
                    loss.backward()
                    return loss.item()
                def fit(self, x):
                    a = self.step(x)
                    b = self.step_item(x)
                    c = unknown_step(x)
            """
        )
        calls = {an.dotted(a.targets[0].target): a.value for a in an.index(ctx).nodes(cst.Assign)}
        assert an.helper_backpropagated_loss(ctx, calls["a"])
        assert not an.helper_backpropagated_loss(ctx, calls["b"])
        assert not an.helper_backpropagated_loss(ctx, calls["c"])

    def test_loss_calls(self) -> None:
        imps = an.imports(context("import torch\n"))
        for text in ("criterion(out, y)", "F.cross_entropy(out, y)", "outputs.loss", "loss_fn(a, b)"):
            assert an.is_loss_call(imps, cst.parse_expression(text)), text
        assert not an.is_loss_call(imps, cst.parse_expression("model(x)"))

    def test_assigned_names(self) -> None:
        module = cst.parse_module("a, self.b = f()\nself.total += x\n")
        first, second = (s.body[0] for s in module.body if isinstance(s, cst.SimpleStatementLine))
        assert an.assigned_names(first) == {"a", "self.b"}
        assert an.assigned_names(second) == {"self.total"}


class TestAccumulation:
    SOURCE = """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y){scale}
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        """

    def found(self, scale: str) -> list[tuple[str, bool]]:
        ctx = context(self.SOURCE.format(scale=scale))
        idx, train, funcs = an.index(ctx), an.training(ctx), an.functions(ctx)
        loop = idx.nodes(cst.For)[0]
        events = an.flow(ctx).events(loop.body, [*train.backward, *train.steps])
        divisors = an.loss_divisors(idx)
        return [
            (code(ctx, acc.count), an.divides_loss(ctx, idx, funcs, acc, divisors))
            for acc in an.accumulations(idx, an.imports(ctx), train, events, loop)
        ]

    def test_a_step_every_n_iterations_with_an_unscaled_loss(self) -> None:
        assert self.found("") == [("accum_steps", False)]

    def test_a_loss_divided_by_n(self) -> None:
        assert self.found(" / accum_steps") == [("accum_steps", True)]

    def test_clears_that_accelerate_does_not_hold_back(self) -> None:
        ctx = context(
            """
            for batch in loader:
                with accelerator.accumulate(model):
                    accelerator.backward(model(batch).loss)
                    optimizer.step()
                    optimizer.zero_grad()
                    model.zero_grad()
                    for p in model.parameters():
                        p.grad = None
                    if accelerator.sync_gradients:
                        model.zero_grad(set_to_none=True)
                with accelerator.accumulate(model):
                    model.zero_grad()  # no backward pass in this block
            """
        )
        found = [code(ctx, u.clear).strip() for u in an.unheld_clears(an.index(ctx), an.training(ctx))]
        assert found == ["model.zero_grad()", "p.grad = None"]


def test_functions_are_looked_up_where_python_would() -> None:
    ctx = context(
        """
        import functools

        def helper():
            pass

        def first():
            def fn():
                pass
            run(fn)

        def second(opt):
            def fn_base(optimizer, weight):
                optimizer.zero_grad()
            fn = functools.partial(fn_base, opt, weight=1)
            run(fn)
            helper()
            fn()
        """
    )
    funcs = an.functions(ctx)
    runs = calls_named(ctx, "run")
    assert [f.name.value for f in funcs.passed_functions(runs[0])] == ["fn"]
    closures = funcs.passed_closures(runs[1])
    # The nested `fn` of `first` is not visible in `second`: only the partial's target is.
    assert [(f.name.value, code(ctx, p) if p is not None else None) for f, p in closures] == [
        ("fn_base", "functools.partial(fn_base, opt, weight=1)")
    ]
    assert [f.name.value for f in funcs.resolve(calls_named(ctx, "helper")[0])] == ["helper"]
    assert funcs.resolve(calls_named(ctx, "fn")[0]) == []
    second = next(f for f in an.index(ctx).nodes(cst.FunctionDef) if f.name.value == "second")
    assert {f.name.value for f in funcs.reachable(second)} == {"second", "fn_base", "helper"}


def test_names_that_hold_a_partial_or_a_factorys_closure_reach_the_function() -> None:
    ctx = context(
        """
        import functools

        def step(model, opt, batch):
            opt.step()

        def make_update(model, opt):
            def update(batch):
                opt.step()
            def unused():
                pass
            return update

        def fit(model, opt, loader):
            run = functools.partial(step, model, opt)
            update = make_update(model, opt)
            for batch in loader:
                run(batch)
                update(batch)

        def other(batch):
            update(batch)
        """
    )
    funcs = an.functions(ctx)
    fit = next(f for f in an.index(ctx).nodes(cst.FunctionDef) if f.name.value == "fit")
    other = next(f for f in an.index(ctx).nodes(cst.FunctionDef) if f.name.value == "other")
    loop = an.index(ctx).nodes(cst.For)[0]
    reached = {f.name.value for f in funcs.reachable(loop.body) if isinstance(f, cst.FunctionDef)}
    assert reached == {"step", "update"}
    # `update` is assigned in `fit`: a use in another function holds nothing known.
    assert [f.name.value for f in funcs.reachable(other)] == ["other"]
    update = calls_named(ctx, "update")[0]
    assert [f.name.value for f in funcs.made_by_factory(update.func)] == ["update"]
