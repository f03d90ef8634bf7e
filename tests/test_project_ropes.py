"""CPU frame indices that a layer's `forward` hands to a rotary embedding of another module
(TL011): not reported when that module's `forward` moves them to the device it is given
before it reads them (diffusers' Helios and Framepack ropes); reported when it does not, and
the cache re-checks the layer's module when the rotary embedding changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from project_support import check, copy_project, edit, findings, summary

FOUND = [("ropes/model.py", 15, "TL011")]
MOVE = "frame_indices = frame_indices.to(device=device, dtype=torch.float32)"


def test_the_summary_names_the_parameter_that_forward_places() -> None:
    source = (Path(__file__).parent / "data" / "projects" / "ropes" / "ropes" / "rotary.py").read_text()
    assert summary(source)["defs"]["FrameRotary"]["methods"]["forward"]["places_params"] == ["frame_indices"]


def test_indices_that_the_rotary_embedding_moves_are_not_reported(tmp_path: Path) -> None:
    assert findings(check(copy_project("ropes", tmp_path)), "TL011") == []


@pytest.mark.parametrize(
    "unplaced",
    [
        "frame_indices = frame_indices.float()",  # a cast, no move
        # computed with on the host before it is moved
        "frame_indices = (frame_indices * 2).to(device=device, dtype=torch.float32)",
    ],
)
def test_indices_the_rotary_embedding_does_not_move_first_are_reported(tmp_path: Path, unplaced: str) -> None:
    project = copy_project("ropes", tmp_path)
    edit(project / "ropes" / "rotary.py", MOVE, unplaced)
    assert findings(check(project), "TL011") == FOUND


def test_changing_the_rotary_embedding_rechecks_the_layer(tmp_path: Path) -> None:
    project = copy_project("ropes", tmp_path)
    cache = tmp_path / "cache"
    assert findings(check(project, cache=cache), "TL011") == []
    edit(project / "ropes" / "rotary.py", MOVE, "frame_indices = frame_indices.float()")
    assert findings(check(project, cache=cache), "TL011") == FOUND
