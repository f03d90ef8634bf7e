"""Unit tests of `_analysis.batch_parts`: the part of a batch that one branch of an `if`
chain leaves on the host while it moves another part and a sibling branch moves it."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rules import _analysis as an
from analysis_support import code, context


def left_parts(body: str) -> list[tuple[str, str, list[str]]]:
    """(part, what the branch moves, the calls on that path that take the part) per finding."""
    ctx = context("for images, target in loader:\n" + body)
    (loop,) = an.index(ctx).nodes(cst.For)
    return [
        (left.part, left.moved, [code(ctx, call) for call, _ in left.calls])
        for left in an.parts_left_by_branches(ctx, loop)
    ]


class TestPartsLeftByBranches:
    def test_each_branch_moves_another_part(self) -> None:
        found = left_parts(
            """
                if args.gpu is not None:
                    images = images.cuda(args.gpu)
                elif torch.cuda.is_available():
                    target = target.cuda(args.gpu)
                output = model(images)
                loss = criterion(output, target)
            """
        )
        assert found == [
            ("target", "images", ["criterion(output, target)"]),
            ("images", "target", ["model(images)"]),
        ]

    def test_the_path_runs_through_its_own_branch_only(self) -> None:
        (found,) = left_parts(
            """
                if gpu:
                    images = images.cuda()
                    print(target.shape)
                else:
                    images, target = images.to(device), target.to(device)
                    log(target)
                loss = criterion(model(images), target)
            """
        )
        assert found == ("target", "images", ["print(target.shape)", "criterion(model(images), target)"])

    @pytest.mark.parametrize(
        "body",
        [
            # every branch moves the whole batch, each to the device it selects
            """
                if args.gpu is not None:
                    images, target = images.cuda(args.gpu), target.cuda(args.gpu)
                elif mps:
                    images = images.to("mps")
                    target = target.to("mps")
            """,
            # a branch that moves nothing: the CPU path
            """
                if args.cuda:
                    images, target = images.cuda(), target.cuda()
                else:
                    images = images.float()
            """,
            # separate `if`s may all run
            """
                if args.gpu is not None:
                    images = images.cuda(args.gpu)
                if torch.cuda.is_available():
                    target = target.cuda(args.gpu)
            """,
            # the part is moved outside the chain
            """
                target = target.to(device)
                if gpu:
                    images = images.cuda()
                else:
                    images, target = images.to(device), target.to(device)
            """,
            # the chain tests the part, or the branch leaves the iteration
            """
                if target is None:
                    images = images.cuda()
                else:
                    images, target = images.cuda(), target.cuda()
            """,
            """
                if skip:
                    images = images.cuda()
                    continue
                else:
                    images, target = images.cuda(), target.cuda()
            """,
        ],
    )
    def test_no_part_left(self, body: str) -> None:
        assert left_parts(body) == []

    @pytest.mark.parametrize(
        ("first", "second", "left"),
        [
            # a local helper may move what the branch hands it
            (["images = images.cuda()", "prepare(target)"], ["images, target = images.cuda(), target.cuda()"], []),
            # but handing the part to one is no evidence that the path needs it moved
            (["images = images.cuda()"], ["prepare(target)", "images = images.cuda()"], []),
            (["images = images.cuda()"], ["target = target.cuda()", "images = images.cuda()"], ["target"]),
        ],
    )
    def test_local_helpers(self, first: list[str], second: list[str], left: list[str]) -> None:
        lines = [
            "def prepare(t):",
            "    return t",
            "for images, target in loader:",
            "    if gpu:",
            *(f"        {line}" for line in first),
            "    else:",
            *(f"        {line}" for line in second),
            "    loss = criterion(model(images), target)",
        ]
        ctx = context("\n".join(lines) + "\n")
        (loop,) = an.index(ctx).nodes(cst.For)
        assert [found.part for found in an.parts_left_by_branches(ctx, loop)] == left


def items_left(body: str) -> list[tuple[str, str]]:
    """(the call, the item as it takes it) per use of an item left on the host."""
    ctx = context("def step(t):\n    return t\nfor batch in loader:\n" + textwrap.indent(textwrap.dedent(body), "    "))
    loop = an.index(ctx).nodes(cst.For)[0]
    return [(code(ctx, use.call), code(ctx, use.part)) for use in an.items_left_on_host(ctx, loop)]


class TestItemsLeftOnHost:
    @pytest.mark.parametrize(
        ("body", "left"),
        [
            (
                """
                input_ids = batch["input_ids"].to(device)
                labels = batch["labels"]
                loss = criterion(model(input_ids), labels)
                """,
                [("criterion(model(input_ids), labels)", "labels")],
            ),
            (
                """
                batch["pixels"] = batch["pixels"].cuda()
                out = model(batch["pixels"])
                loss = F.cross_entropy(out, batch["label"].long())
                """,
                [('F.cross_entropy(out, batch["label"].long())', 'batch["label"].long()')],
            ),
            # the item is moved, or kept on the host on purpose (a length)
            (
                """
                x = batch["x"].to(device)
                loss = ctc(model(x), batch["y"].to(device), batch["x_lens"])
                """,
                [],
            ),
            # the whole batch is moved, handed to a helper, or written by a computed key
            (
                """
                batch = {k: v.to(device) for k, v in batch.items()}
                loss = criterion(model(batch["x"]), batch["y"])
                """,
                [],
            ),
            (
                """
                x = batch["x"].to(device)
                batch.to(device)
                loss = criterion(model(x), batch["y"])
                """,
                [],
            ),
            (
                """
                x = batch["x"].to(device)
                step(batch)
                loss = criterion(model(x), batch["y"])
                """,
                [],
            ),
            (
                """
                for k in batch:
                    batch[k] = batch[k].cuda()
                loss = criterion(model(batch["x"]), batch["y"])
                """,
                [],
            ),
            # nothing moved: the plain unmoved batch, also where an item is only cast
            ('loss = criterion(model(batch["x"]), batch["y"])\n', []),
            ('x = batch["x"].to(torch.float32)\nloss = criterion(model(x), batch["y"])\n', []),
        ],
    )
    def test_items_met_with_the_model_output(self, body: str, left: list[tuple[str, str]]) -> None:
        assert items_left(body) == left


@pytest.mark.parametrize(
    ("cast", "left"),
    [('images = images.to("cuda")', ["target"]), ("images = images.to(torch.float16)", [])],
)
def test_a_cast_is_no_move(cast: str, left: list[str]) -> None:
    found = left_parts(
        f"""
            if half:
                {cast}
            else:
                images, target = images.cuda(), target.cuda()
            loss = criterion(model(images), target)
        """
    )
    assert [part for part, _, _ in found] == left
