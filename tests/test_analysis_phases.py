"""Unit tests of `torchlint.rules._analysis.phases`: functions that train or evaluate
depending on a phase argument."""

from __future__ import annotations

from analysis_support import code, context

from torchlint.rules import _analysis as an


def steps(source: str) -> list[tuple[str, str, str, str | None, bool]]:
    ctx = context(source)
    return [
        (s.func.name.value, s.param, code(ctx, s.forward), s.other_phase, an.runs_in_train_mode(ctx, s))
        for s in an.phase_steps(ctx)
    ]


def test_a_phase_string_from_the_loop_around_the_call() -> None:
    found = steps(
        """
        def run(model, batch, phase):
            model.train()
            out = prepare(batch)
            loss = criterion(model(out), batch.y)
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            return loss.item()

        def prepare(batch):
            return batch.x

        for epoch in range(10):
            for phase in ["train", "valid"]:
                for batch in loaders[phase]:
                    run(model, batch, phase)
        """
    )
    # Not `prepare(batch)`, a helper; the forward that runs for every phase.
    assert found == [("run", "phase", "model(out)", "'valid'", True)]


def test_a_training_flag_passed_false() -> None:
    found = steps(
        """
        def run_epoch(net, loader, train=True):
            for x, y in loader:
                loss = criterion(net(x), y)
                if train:
                    loss.backward()
                    opt.step()

        net.train()
        run_epoch(net, train_loader)
        run_epoch(net, val_loader, train=False)
        """
    )
    assert found == [("run_epoch", "train", "net(x)", "False", True)]


def test_eval_mode_on_the_path_or_before_the_call_or_no_other_phase() -> None:
    switched_by_flag = steps(
        """
        def run(model, x, mode):
            model.train(mode == "train")
            loss = model(x)
            if mode == "train":
                loss.backward()
                opt.step()
        run(model, x, "train")
        run(model, x, "val")
        """
    )
    caller_switches = steps(
        """
        def run(model, x, mode):
            loss = model(x)
            if mode == "train":
                loss.backward()
                opt.step()
        def main():
            run(model, x, "train")
            model.eval()
            run(model, x, "val")
        """
    )
    only_training = steps(
        """
        def run(model, x, mode):
            loss = model(x)
            if mode == "train":
                loss.backward()
                opt.step()
        run(model, x, "train")
        """
    )
    batch_norm_only = steps(
        """
        def run(net, x, phase):
            net.train()
            if phase == "valid":
                for m in net.modules():
                    m.eval()
            loss = net(x)
            if phase == "train":
                loss.backward()
                opt.step()
        """
    )
    assert [s[-1] for s in switched_by_flag + caller_switches + only_training + batch_norm_only] == [False] * 4


def test_no_caller_in_sight_needs_the_function_to_force_train_mode() -> None:
    forced = steps(
        """
        def make_train(batch_id, config, phase, **inputs):
            net = config["net"]
            net = net.train()
            result = net(inputs["imgs"])
            if phase == "train":
                result.mean().backward()
                optimizer.step()
        """
    )
    left_alone = steps(
        """
        def make_train(batch_id, config, phase, **inputs):
            net = config["net"]
            result = net(inputs["imgs"])
            if phase == "train":
                result.mean().backward()
                optimizer.step()
        """
    )
    assert [s[-1] for s in forced] == [True] and [s[-1] for s in left_alone] == [False]


def test_the_forward_is_of_something_known_as_a_network() -> None:
    found = steps(
        """
        def run(batch, phase):
            tokens = tokenize(batch)
            loss = criterion(encoder(tokens), batch.y)
            if phase == "train":
                loss.backward()
                opt.step()
        for phase in ["train", "val"]:
            run(batch, phase)
        """
    )
    # Not `tokenize(batch)`: nothing switches its mode and its name is no network's.
    assert [s[2] for s in found] == ["encoder(tokens)"]


def test_tests_that_are_not_training_phases() -> None:
    found = steps(
        """
        def run(model, x, phase, verbose):
            loss = model(x)
            if phase == "test":
                loss.backward()
            if verbose:
                opt.step()
        run(model, x, "test", True)
        """
    )
    assert found == []
