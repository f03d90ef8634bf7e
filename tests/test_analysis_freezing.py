"""The analysis library's `freezing`: networks whose parameters are frozen, classes that
freeze their own, and networks kept out of training by what they are called."""

from __future__ import annotations

from analysis_support import context

from torchlint.rules import _analysis as an


def test_parameters_frozen_in_place_in_loops_and_by_helpers() -> None:
    freezing = an.freezing(
        context(
            """
            teacher.requires_grad_(False)
            for p in self.target.parameters():
                p.requires_grad = False
            [q.requires_grad_(False) for q in ema.parameters()]
            freeze([encoder, decoder])
            set_requires_grad(critic, True)
            student.requires_grad_(True)
            prior = Prior().to(device).requires_grad_(False)
            self.wrapped.module.requires_grad_(False)
            """
        )
    )
    assert freezing.names >= {"teacher", "target", "ema", "encoder", "decoder", "prior", "wrapped"}
    assert not {"critic", "student"} & freezing.names
    assert freezing.is_frozen("self.teacher") and freezing.is_frozen("teacher")
    assert not freezing.is_frozen("student")


def test_methods_that_freeze_and_classes_that_freeze_themselves() -> None:
    ctx = context(
        """
        class Teacher(nn.Module):
            def __init__(self):
                super().__init__()
                self.requires_grad_(False)
        class Student(nn.Module):
            def __init__(self):
                super().__init__()
        teacher = Teacher().eval()
        student = Student().eval()
        self.backbone.freeze()
        self.head.unfreeze()
        for p in self.ema.module.parameters():
            p.requires_grad = False
        """
    )
    freezing = an.freezing(ctx)
    assert freezing.self_freezing == {"Teacher"}
    assert all(freezing.is_frozen(key) for key in ("teacher", "backbone", "ema"))
    assert not any(freezing.is_frozen(key) for key in ("student", "head"))


def test_networks_kept_frozen_by_what_they_are() -> None:
    freezing = an.freezing(context("critic.requires_grad_(False)\nmodel.train()\n"))
    assert freezing.kept_frozen("ema_model") and freezing.kept_frozen("self.teacher")
    assert freezing.kept_frozen("critic") and not freezing.is_frozen("ema_model")
    assert not freezing.kept_frozen("model")


def test_evaluation_passes_and_training_evaluations_share_one_answer() -> None:
    ctx = context("backbone.freeze()\n")
    assert an.evaluations(ctx).freezing is an.freezing(ctx)
    assert an.training_evaluations(ctx).freezing is an.freezing(ctx)


def test_networks_built_with_a_keyword_that_freezes_them() -> None:
    freezing = an.freezing(
        context(
            """
            from nets import Backbone, Head
            backbone = Backbone(depth=50, trainable=False).to(device)
            self.text = TextTower(freeze=True)
            head = Head(trainable=True)
            tower = Backbone(freeze=False)
            other = Backbone(trainable=flag)
            """
        )
    )
    assert freezing.is_frozen("backbone") and freezing.is_frozen("self.text")
    assert not any(freezing.is_frozen(name) for name in ("head", "tower", "other"))
