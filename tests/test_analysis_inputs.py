"""Unit tests of `_analysis.inputs`: the model a call feeds, the move of that model made before
the data reaches it, and the CPU tensors that tokenizers and processors return."""

from __future__ import annotations

import libcst as cst
import pytest

from torchlint.rules import _analysis as an
from analysis_support import call, code, context


class TestModelCall:
    @pytest.mark.parametrize(
        ("text", "model"),
        [
            ("model(x)", "model"),
            ("model.forward(x)", "model"),
            ("self.encoder(x)", "self.encoder"),
            ("self.lm.generate(ids)", "self.lm"),
            ("pipe.model.generate(ids)", "pipe.model"),
            ("batch.values()", None),
            ("get_model().generate(ids)", None),
            ("writer.add_graph(model, images)", "model"),
            ("writer.add_graph(model)", None),
        ],
    )
    def test_the_model_that_runs_on_the_arguments(self, text: str, model: str | None) -> None:
        ctx = context(text + "\n")
        found = an.model_call(call(ctx, text))
        assert (code(ctx, found) if found is not None else None) == model


class TestModelMoves:
    def test_a_move_in_another_method_or_earlier_in_the_same_scope(self) -> None:
        ctx = context(
            """
            class Runner:
                def __init__(self, net):
                    self.net = net.cuda()
                def run(self, x):
                    return self.net(x)
            model = Net()
            model(a)
            model.to("cuda")
            model(b)
            """
        )
        moves = an.model_moves(ctx)
        assert code(ctx, moves.before(call(ctx, "self.net(x)"), call(ctx, "self.net(x)"))) == "net.cuda()"
        assert moves.before(call(ctx, "model(a)"), call(ctx, "model(a)")) is None
        assert code(ctx, moves.before(call(ctx, "model(b)"), call(ctx, "model(b)"))) == 'model.to("cuda")'

    def test_a_parameter_model_is_moved_where_a_caller_moved_what_it_passes(self) -> None:
        ctx = context(
            """
            def evaluate(model, x):
                return model(x)
            def score(model, x):
                return model(x)
            net = Net().to("cuda")
            evaluate(net, batch)
            score(Net(), batch)
            """
        )
        moves = an.model_moves(ctx)
        evaluate, score = [c for c in an.index(ctx).nodes(cst.Call) if code(ctx, c) == "model(x)"]
        assert code(ctx, moves.before(evaluate, evaluate)) == 'Net().to("cuda")'
        assert moves.before(score, score) is None

    def test_a_model_built_again_after_the_move_is_not_moved(self) -> None:
        ctx = context(
            """
            net = Net()
            net.cuda()
            net = Net()
            net(x)
            """
        )
        assert an.model_moves(ctx).before(call(ctx, "net(x)"), call(ctx, "net(x)")) is None

    def test_a_move_that_every_path_wraps_in_data_parallel_feeds_no_host_data(self) -> None:
        ctx = context(
            """
            import torch.nn as nn
            def train(net, x):
                return net(x)
            if args.gpu is None:
                model = nn.DataParallel(model).cuda()
            else:
                model = model.cuda(args.gpu)
            train(model, batch)
            wrapped = nn.DataParallel(Net()).cuda()
            wrapped(batch)
            """
        )
        moves = an.model_moves(ctx)
        unwrapped = moves.before(call(ctx, "net(x)"), call(ctx, "net(x)"))
        assert unwrapped is not None and code(ctx, unwrapped) == "model.cuda(args.gpu)"
        assert moves.before(call(ctx, "wrapped(batch)"), call(ctx, "wrapped(batch)")) is None


class TestTokenizerOutputs:
    @pytest.mark.parametrize(
        ("expr", "made"),
        [
            ('tokenizer(text, return_tensors="pt")', True),
            ('tokenizer(text, return_tensors="pt").input_ids', True),
            ('self.tok(text, return_tensors="pt")["input_ids"].long()', True),
            ('tok.encode(text, return_tensors="pt")', True),
            ('image_processor(images=img, return_tensors="pt").pixel_values', True),
            ('tokenizer(text, return_tensors="pt").to(device)', False),
            ('tokenizer(text, return_tensors="pt").input_ids.cuda()', False),
            ('tokenizer(text, return_tensors="np")', False),
            ("tokenizer(text)", False),
            ('DataCollatorWithPadding(tokenizer, return_tensors="pt")', False),
            ('encoder(text, return_tensors="pt")', False),
        ],
    )
    def test_tokenizer_call_sees_outputs_as_made(self, expr: str, made: bool) -> None:
        ctx = context(f"x = {expr}\n")
        (assign,) = an.index(ctx).nodes(cst.Assign)
        assert (an.tokenizer_call(assign.value) is not None) is made

    def test_outputs_and_the_encodings_that_move_in_place(self) -> None:
        ctx = context(
            """
            enc = tokenizer(prompt, return_tensors="pt")
            ids = tokenizer(prompt, return_tensors="pt").input_ids
            single = tokenizer.encode(prompt, return_tensors="pt")
            moved = tokenizer(prompt, return_tensors="pt").to("cuda")
            """
        )
        found = [(code(ctx, o.statement.targets[0].target), sorted(o.encodings)) for o in an.tokenizer_outputs(ctx)]
        assert found == [("enc", ["enc"]), ("ids", []), ("single", [])]

    def test_calls_on_the_output_until_it_is_moved(self) -> None:
        ctx = context(
            """
            def answer(model, tokenizer, question):
                enc = tokenizer(question, return_tensors="pt")
                ids = enc["input_ids"]
                model.generate(ids)
                enc.to("cuda")
                model(**enc)
                model(ids)
                ids = ids.to("cuda")
                model(ids)
            """
        )
        (output,) = an.tokenizer_outputs(ctx)
        calls = [code(ctx, c) for c, _ in an.calls_on_tokenizer_output(an.index(ctx), output)]
        assert calls == ["model.generate(ids)", "model(ids)"]


class TestFirstFed:
    def test_the_first_call_that_runs_a_moved_model(self) -> None:
        ctx = context(
            """
            def predict(texts):
                enc = tokenizer(texts, return_tensors="pt")
                log(enc)
                encoder(**enc)
                net(**enc)
            encoder = Encoder()
            net = Net().cuda()
            """
        )
        (output,) = an.tokenizer_outputs(ctx)
        calls = an.calls_on_tokenizer_output(an.index(ctx), output)
        found = an.model_moves(ctx).first_fed(calls, output.statement)
        assert found is not None
        call, move, inputs = found
        assert (code(ctx, call), code(ctx, move), [code(ctx, i) for i in inputs]) == ("net(**enc)", "Net().cuda()", ["enc"])


    def test_a_sample_meets_a_model_moved_after_it_was_taken(self) -> None:
        ctx = context(
            """
            from torchvision import datasets
            test_set = datasets.MNIST("data")
            image, label = test_set[0]
            net = Net().cuda()
            net(image)
            """
        )
        (sample,) = an.dataset_samples(ctx)
        calls = an.calls_on_raw_sample(an.index(ctx), sample)
        assert an.model_moves(ctx).first_fed(calls, sample.statement) is None  # moved after the data came
        found = an.model_moves(ctx).first_fed(calls, None)
        assert found is not None and code(ctx, found[1]) == "Net().cuda()"


class TestDiscardedTensorMoves:
    @pytest.mark.parametrize(
        ("binding", "found"),
        [
            ("img = tfms(image).unsqueeze(0)", True),
            ("img = torch.randn(1, 3, 224, 224)", True),
            ("img = torch.from_numpy(array)", True),
            ("img = tokenizer(text, return_tensors='pt').input_ids", True),
            ("img = tokenizer(text, return_tensors='pt')", False),  # a BatchEncoding moves itself
            ("img = dataset[0]", False),  # PyG's Data moves itself: not evidently a tensor
            ("img = build().float()", False),  # a module has float() too
            ("img = img.to(device)", False),
        ],
    )
    def test_a_move_statement_of_a_name_last_bound_to_a_tensor(self, binding: str, found: bool) -> None:
        ctx = context(f"import torch\n{binding}\nimg.to(device)\n")
        moves = an.discarded_tensor_moves(ctx)
        assert [(m.name, code(ctx, m.move)) for m in moves] == ([("img", "img.to(device)")] if found else [])

    def test_only_statements_throw_the_copy_away(self) -> None:
        ctx = context("import torch\nx = torch.zeros(3)\ny = x.cuda()\nmodel(x.to(device))\n")
        assert an.discarded_tensor_moves(ctx) == []

    def test_the_calls_that_still_get_the_unmoved_tensor(self) -> None:
        ctx = context(
            """
            import torch
            x = torch.zeros(3)
            x.cuda()
            first = model(x)
            x = x.cuda()
            second = model(x)
            """
        )
        (moved,) = an.discarded_tensor_moves(ctx)
        calls = an.calls_after_discarded_move(an.index(ctx), moved)
        assert [code(ctx, c) for c, _ in calls] == ["model(x)"]


class TestHostTensors:
    @pytest.mark.parametrize(
        ("value", "made"),
        [
            ("torch.tensor(ids)", "torch.tensor(ids)"),
            ("torch.tensor(ids, dtype=torch.long)", "torch.tensor(ids, dtype=torch.long)"),
            ("torch.from_numpy(image).permute(2, 0, 1).unsqueeze(0)", "torch.from_numpy(image)"),
            ("torch.LongTensor(ids)", "torch.LongTensor(ids)"),
            ("[torch.tensor(t) for t in tokens]", "torch.tensor(t)"),
            ("torch.tensor(ids, device=device)", None),  # made where it is used
            ("torch.as_tensor(x, torch.float, device)", None),  # placed positionally
            ("torch.from_numpy(image).cuda()", None),
            ("torch.from_numpy(image).to(device)", None),
            ("torch.zeros(3)", None),  # a factory, not data: TL011's business
            ("torch.cuda.LongTensor(ids)", None),
            ("np.array(ids)", None),
        ],
    )
    def test_a_tensor_made_from_data_on_the_cpu(self, value: str, made: str | None) -> None:
        ctx = context(f"import numpy as np\nimport torch\nx = {value}\n")
        found = [code(ctx, t.made) for t in an.host_tensors(ctx)]
        assert found == ([made] if made else [])

    def test_a_conversion_imported_by_name(self) -> None:
        ctx = context("from torch import from_numpy as as_torch\nx = as_torch(image)\ny = tensor(ids)\n")
        assert [code(ctx, t.made) for t in an.host_tensors(ctx)] == ["as_torch(image)"]

    def test_the_calls_that_still_get_the_cpu_tensor(self) -> None:
        ctx = context(
            """
            import torch
            from torch.nn.utils.rnn import pad_sequence
            def serve(model, batch, device):
                tensors = [torch.tensor(t) for t in batch]
                padded = pad_sequence(tensors, batch_first=True)
                first = model(padded)
                second = model(torch.stack(tensors, dim=0))
                padded = padded.to(device)
                third = model(padded)
                fourth = model(torch.stack(tensors, dim=0).to(device))
            """
        )
        (tensor,) = an.host_tensors(ctx)
        calls = an.calls_after_binding(an.index(ctx), tensor.statement)
        assert [code(ctx, c) for c, _ in calls if an.callee_name(c) == "model"] == [
            "model(padded)",
            "model(torch.stack(tensors, dim=0))",
        ]


class TestParameterModelMovedInScope:
    def test_a_parameter_moved_in_the_function_itself(self) -> None:
        ctx = context(
            """
            def train(model, loader, device):
                model.to(device)
                for x, y in loader:
                    model(x)
            def evaluate(model, loader):
                for x, y in loader:
                    model(x)
            model = Net().cuda()
            """
        )
        first, second = an.index(ctx).nodes(cst.For)
        moves = an.model_moves(ctx)
        calls = [c for c in an.index(ctx).nodes(cst.Call) if code(ctx, c) == "model(x)"]
        found = moves.before(calls[0], first)
        assert found is not None and code(ctx, found) == "model.to(device)"
        # never called: the module-level `model` is another name, not the parameter
        assert moves.before(calls[1], second) is None
