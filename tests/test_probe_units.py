"""The probe's pure parts, without running any script: line markers, program detection,
device-error parsing, status assignment and the JSON and JUnit reports."""

from __future__ import annotations

import json
import sysconfig
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from probe_support import line_of, static

from torchlint.config import Config, ProbeScript, ProbeSettings
from torchlint.runtime_probe import ending, json_report, junit_report, text_report
from torchlint.runtime_probe.annotations import as_findings
from torchlint.runtime_probe.api import ProbeOptions, ProbeResult, ScriptResult, is_program, run_spec
from torchlint.runtime_probe.devices import mismatch_devices
from torchlint.runtime_probe.markers import MARKER, compile_script
from torchlint.runtime_probe.protocol import Crash, Event, Frame, RankReport
from torchlint.runtime_probe.statuses import Status, assign

# --- line markers -----------------------------------------------------------------------

MARKED = textwrap.dedent(
    '''\
    """A docstring stays the docstring."""
    from __future__ import annotations


    def f(x):
        try:
            y = (x +
                 1)
        except ValueError:
            y = 0
        return y


    for i in range(2):
        if i:
            f(i)
        else:
            pass
    raise RuntimeError("boom")
    '''
)


def run_marked(lines: list[int]) -> tuple[set[int], BaseException]:
    reached: set[int] = set()
    code = compile_script(MARKED, "marked.py", lines)
    namespace = {MARKER: reached.add, "__name__": "__main__"}
    with pytest.raises(RuntimeError) as info:
        exec(code, namespace)
    return reached, info.value


def test_markers_record_the_lines_that_ran() -> None:
    reached, _ = run_marked([1, 2, 8, 10, 16, 18, 19])
    # 10 is in the except branch that never ran; 1 and 2 cannot carry markers.
    assert reached == {8, 16, 18, 19}


def test_markers_keep_line_numbers_and_the_docstring() -> None:
    _, error = run_marked([7, 16, 19])
    tb = error.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    assert tb.tb_lineno == 19
    code = compile_script(MARKED, "marked.py", [7])
    assert code.co_consts[0] == "A docstring stays the docstring."


# --- which files are programs -------------------------------------------------------------


@pytest.mark.parametrize(
    "source, expected",
    [
        ("if __name__ == '__main__':\n    main()\n", True),
        ("if '__main__' == __name__:\n    main()\n", True),
        ("for x in range(3):\n    pass\n", True),
        ("train()\n", True),
        ('"""doc"""\nimport torch\nX = 1\ndef f():\n    pass\nclass C:\n    pass\n', False),
        ("def broken(:\n", False),
    ],
)
def test_is_program(source: str, expected: bool) -> None:
    assert is_program(source) is expected


# --- device-mismatch messages ---------------------------------------------------------------


@pytest.mark.parametrize(
    "message, devices",
    [
        (
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
            ("cuda:0", "cpu"),
        ),
        (
            "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors "
            "on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
            ("cpu", "cuda:0"),
        ),
        ("Tensor on device meta is not on the expected device cpu!", ("meta", "cpu")),
        (
            "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or input "
            "should be a MKLDNN tensor and weight is a dense tensor",
            ("cpu", "cuda"),
        ),
        (
            "Input and parameter tensors are not at the same device, found input tensor at cpu and parameter "
            "tensor at cuda:0",
            ("cpu", "cuda:0"),
        ),
    ],
)
def test_device_mismatch_messages(message: str, devices: tuple[str, ...]) -> None:
    assert mismatch_devices(message) == devices


@pytest.mark.parametrize(
    "message",
    [
        "mat1 and mat2 shapes cannot be multiplied (16x4 and 8x1)",
        "Input type (torch.cuda.FloatTensor) and weight type (torch.cuda.HalfTensor) should be the same",
        "CUDA out of memory.",
    ],
)
def test_other_errors_are_not_device_mismatches(message: str) -> None:
    assert mismatch_devices(message) is None


# --- statuses ------------------------------------------------------------------------------

SCRIPT_SOURCE = textwrap.dedent(
    """\
    import torch

    def helper(optimizer):
        optimizer.step()  # line: helper-step

    def unused(optimizer):
        optimizer.step()  # line: unused-step

    for step in range(10):  # line: loop
        loss.backward()  # line: backward
        optimizer.step()  # line: step
        helper(optimizer)
    start = time.time()  # line: clock
    """
)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT_SOURCE, encoding="utf-8")
    return path


def rank(events: list[Event], reached: list[int], rank_id: int = 0, cuda: bool = False) -> RankReport:
    return RankReport(rank_id, 100 + rank_id, cuda, 10, (), tuple(events), tuple(reached))


def event(code: str, path: Path, *lines: int, benign: bool = False, weak: bool = False, n: int = 1) -> Event:
    return Event(code, tuple(Frame(str(path), line) for line in lines), f"runtime {code}", {"n": n}, benign, weak)


def statuses(script: Path, findings, reports) -> dict[tuple[str, int], Status]:
    results = assign(findings, reports, str(script), script.read_text(encoding="utf-8"))
    return {(r.code, r.line): r.status for r in results}


def test_an_event_in_the_same_loop_confirms(script: Path) -> None:
    finding = static(script, "TL001", "backward")
    step = event("TL102", script, 11)
    [result] = assign([finding], [rank([step], [10])], str(script), SCRIPT_SOURCE)
    assert result.status is Status.CONFIRMED
    assert result.evidence["runtime_code"] == "TL102" and result.evidence["n"] == 1


def test_an_event_through_a_helper_confirms_via_the_callers_frame(script: Path) -> None:
    finding = static(script, "TL001", "step")
    # Innermost frame in helper(), its caller on line 12 of the loop.
    step = event("TL102", script, 4, 12)
    assert statuses(script, [finding], [rank([step], [11])]) == {("TL001", 11): Status.CONFIRMED}


def test_an_event_elsewhere_does_not_confirm(script: Path) -> None:
    finding = static(script, "TL001", "unused-step")
    step = event("TL102", script, 11)
    assert statuses(script, [finding], [rank([step], [11])]) == {
        ("TL001", 7): Status.NOT_REACHED,
        ("TL102", 11): Status.FOUND,
    }


def test_a_line_that_ran_without_evidence_is_not_reproduced(script: Path) -> None:
    finding = static(script, "TL001", "step")
    assert statuses(script, [finding], [rank([], [11])]) == {("TL001", 11): Status.NOT_REPRODUCED}


def test_a_benign_event_leaves_the_finding_not_reproduced_with_its_note(script: Path) -> None:
    finding = static(script, "TL004", "step")
    benign = event("TL004", script, 11, benign=True)
    [result] = assign([finding], [rank([benign], [11])], str(script), SCRIPT_SOURCE)
    assert result.status is Status.NOT_REPRODUCED
    assert result.evidence["runtime_message"] == "runtime TL004"


def test_weak_evidence_confirms_only_on_its_own_line_and_is_never_found_alone(script: Path) -> None:
    view = event("TL003", script, 10, weak=True)
    assert statuses(script, [static(script, "TL003", "backward")], [rank([view], [10])]) == {
        ("TL003", 10): Status.CONFIRMED
    }
    assert statuses(script, [static(script, "TL003", "step")], [rank([view], [11])]) == {
        ("TL003", 11): Status.NOT_REPRODUCED
    }
    assert statuses(script, [], [rank([view], [])]) == {}


def test_a_finding_on_a_loop_header_stands_for_the_whole_loop(script: Path) -> None:
    finding = static(script, "TL008", "loop")
    inside, after = event("TL008", script, 11, weak=True), event("TL008", script, 13, weak=True)
    assert statuses(script, [finding], [rank([inside], [9])]) == {("TL008", 9): Status.CONFIRMED}
    assert statuses(script, [finding], [rank([after], [9])]) == {("TL008", 9): Status.NOT_REPRODUCED}


def test_evidence_on_the_findings_own_line_comes_first(script: Path) -> None:
    nearby, exact = event("TL003", script, 10, n=1), event("TL003", script, 11, n=2)
    [result] = assign([static(script, "TL003", "step")], [rank([nearby, exact], [11])], str(script), SCRIPT_SOURCE)
    assert result.status is Status.CONFIRMED and result.evidence["n"] == 2


def test_timing_needs_a_gpu_and_is_never_passed_without_one(script: Path) -> None:
    finding = static(script, "TL002", "clock")
    assert statuses(script, [finding], [rank([], [13])]) == {("TL002", 13): Status.NEEDS_GPU}
    assert statuses(script, [finding], [rank([], [13], cuda=True)]) == {("TL002", 13): Status.NOT_REPRODUCED}
    timing = event("TL002", script, 13)
    assert statuses(script, [finding], [rank([timing], [13], cuda=True)]) == {("TL002", 13): Status.CONFIRMED}


def test_a_rule_without_a_runtime_check_is_unchecked(script: Path) -> None:
    finding = static(script, "TL042", "step")
    assert statuses(script, [finding], [rank([], [11])]) == {("TL042", 11): Status.UNCHECKED}


def test_no_report_means_not_reached(script: Path) -> None:
    finding = static(script, "TL001", "step")
    assert statuses(script, [finding], []) == {("TL001", 11): Status.NOT_REACHED}


def test_ranks_are_merged(script: Path) -> None:
    step = event("TL102", script, 11)
    [result] = assign([], [rank([step], [], 0), rank([step], [], 1)], str(script), SCRIPT_SOURCE)
    assert result.status is Status.FOUND and result.ranks == (0, 1)


# --- per-script settings ---------------------------------------------------------------------


def test_command_line_beats_script_settings_beat_defaults(tmp_path: Path) -> None:
    script = ProbeScript("jobs/*.py", args=("--fast",), env=(("SEED", "1"),), timeout=30.0, max_steps=5)
    config = Config(probe=ProbeSettings(max_steps=7, timeout=100.0, scripts=(script,)), root=tmp_path)
    configured = run_spec(tmp_path / "jobs" / "a.py", [], config, ProbeOptions(), tmp_path)
    assert (configured.args, configured.env, configured.timeout, configured.max_steps) == (
        ("--fast",),
        (("SEED", "1"),),
        30.0,
        5,
    )
    other = run_spec(tmp_path / "b.py", [], config, ProbeOptions(), tmp_path)
    assert (other.args, other.timeout, other.max_steps) == ((), 100.0, 7)
    flags = run_spec(tmp_path / "jobs" / "a.py", [], config, ProbeOptions(max_steps=3, timeout=9.0, args=("x",)), tmp_path)
    assert (flags.args, flags.timeout, flags.max_steps) == (("x",), 9.0, 3)


# --- reports ------------------------------------------------------------------------------


def make_result(script: Path) -> ProbeResult:
    findings = assign(
        [static(script, "TL001", "step", "train.py"), static(script, "TL001", "unused-step", "train.py")],
        [rank([event("TL102", script, 11), event("TL103", script, 10)], [11])],
        str(script),
        SCRIPT_SOURCE,
        lambda name: Path(name).name,
    )
    ok = ScriptResult("train.py", 0, False, 1.5, 10, ({"step": 1, "alive_graphs": 0},), tuple(findings), 20, 300.0, ranks=(rank([], [11]),))
    crash = Crash("ValueError", "boom", "Traceback ...\nValueError: boom\n", "crash.py", 7)
    crashed = ScriptResult("crash.py", 1, False, 0.5, 2, (), (), 20, 300.0, crash=crash, ranks=(rank([], []),))
    return ProbeResult((ok, crashed))


def test_json_report_has_the_documented_shape(script: Path) -> None:
    data = json.loads(json_report.render(make_result(script)))
    first, second = data["scripts"]
    for key in ("path", "returncode", "timed_out", "steps", "memory", "findings"):
        assert key in first
    assert first["memory"] == [{"step": 1, "alive_graphs": 0}]
    assert {(f["code"], f["status"], f["line"]) for f in first["findings"]} == {
        ("TL001", "confirmed", 11),
        ("TL001", "not-reached", 7),
        ("TL103", "found", 10),
    }
    for finding in first["findings"]:
        assert set(finding) >= {"code", "status", "filename", "line", "message", "evidence"}
    assert second["returncode"] == 1 and second["crash"]["type"] == "ValueError"


def test_junit_report_has_one_case_per_script(script: Path) -> None:
    root = ET.fromstring(junit_report.render(make_result(script)))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1" and suite.get("errors") == "1"
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["train.py"].find("failure") is not None
    assert "ValueError: boom" in (cases["crash.py"].find("error").text or "")


def test_text_report_names_each_status(script: Path) -> None:
    text = text_report.render(make_result(script))
    assert "train.py:11: TL001 [missing-zero-grad] confirmed" in text
    assert "train.py:7: TL001 [missing-zero-grad] not-reached" in text
    assert "crash.py: 2 steps, crashed at crash.py:7 with exit status 1 (ValueError: boom)" in text
    assert "nothing found: the script crashed at crash.py:7 after 2 steps: ValueError: boom" in text
    assert "Probed 2 scripts: 1 crashed, 1 ran to the end;" in text
    assert "1 confirmed, 1 not-reached, 1 found" in text


# --- CUDA memory decisions (the statistics themselves need a GPU: see test_probe_gpu) -------

MIB = 1024 * 1024


def cuda_events(samples: list[tuple[int, int, int, int]]) -> dict[str, Event]:
    from torchlint.runtime_probe.cudamem import CudaMemoryCheck, Sample

    check = CudaMemoryCheck()
    for step, (allocated, reserved, inactive, retries) in enumerate(samples, start=1):
        check.add(Sample(step, allocated, reserved, inactive, retries, 0), (Frame("train.py", 5),))
    return {e.code: e for e in check.events(final=True)}


def test_steady_cuda_growth_is_memory_growth() -> None:
    samples = [(100 * MIB + step * 8 * MIB, 512 * MIB, 0, 0) for step in range(10)]
    found = cuda_events(samples)
    assert set(found) == {"TL103"} and found["TL103"].evidence["growth_per_step_bytes"] == 8 * MIB


def test_flat_or_noisy_cuda_memory_is_not_growth() -> None:
    assert cuda_events([(100 * MIB, 512 * MIB, 0, 0)] * 10) == {}
    noisy = [(100 * MIB + (step % 2) * 8 * MIB, 512 * MIB, 0, 0) for step in range(10)]
    assert cuda_events(noisy) == {}


def test_allocator_retries_and_idle_split_blocks_are_fragmentation() -> None:
    retried = cuda_events([(100 * MIB, 300 * MIB, 0, 0)] * 3 + [(100 * MIB, 400 * MIB, 0, 2)])
    assert set(retried) == {"TL104"} and retried["TL104"].evidence["num_alloc_retries"] == 2
    split = cuda_events([(200 * MIB, 300 * MIB, 0, 0), (400 * MIB, 2048 * MIB, 1200 * MIB, 0), (300 * MIB, 900 * MIB, 100 * MIB, 0)])
    assert set(split) == {"TL104"} and split["TL104"].evidence["peak_step"] == 2
    assert cuda_events([(1024 * MIB, 1100 * MIB, 50 * MIB, 0)] * 4) == {}


# --- pack-2 decisions (the checks themselves run in test_probe_pack2) ------------------------


def test_underflow_counts_scattered_zeros_not_dead_rows_or_columns() -> None:
    torch = pytest.importorskip("torch")
    from torchlint.runtime_probe.amp import gradient_underflow

    weight = torch.full((4, 5), 1e-3)
    weight[0] = 0  # a dead unit: a whole row
    weight[:, 4] = 0  # a dead input: a whole column
    weight[2, 1] = weight[3, 3] = 0  # underflow: scattered
    weight[1, 0] = 1e-6  # below float16's normal range
    bias = torch.tensor([0.0, float("inf"), 1.0])
    assert gradient_underflow([weight, bias]) == (12, 2, 1, 1)


def test_underflow_below_the_threshold_is_benign() -> None:
    from torchlint.runtime_probe.amp import _AutocastSite, _underflow_event

    site = _AutocastSite((Frame("train.py", 3),), steps=[1, 2], entries=1000, zeros=5)
    assert _underflow_event(site).benign
    site.zeros = 50
    underflow = _underflow_event(site)
    assert underflow.weak and not underflow.benign and underflow.evidence["underflow_share"] == 0.05


def test_mode_layers_are_those_that_change_with_the_mode() -> None:
    torch = pytest.importorskip("torch")
    from torchlint.runtime_probe.modes import mode_layers

    nn = torch.nn
    model = nn.Sequential(
        nn.Linear(4, 4), nn.Dropout(0.0), nn.Dropout(0.1), nn.BatchNorm1d(4), nn.BatchNorm1d(4, track_running_stats=False)
    )
    assert mode_layers(model) == {"Dropout": 1, "BatchNorm1d": 1}
    assert mode_layers(nn.LSTM(4, 4, num_layers=2, dropout=0.1)) == {"LSTM": 1}


@pytest.mark.parametrize(
    "devices, local_rank, visible, expected",
    [
        ({"cuda:0"}, 1, 2, 0),  # rank 1 on GPU 0: the bug
        ({"cuda:1"}, 1, 2, None),
        ({"cuda:0"}, 0, 2, None),
        ({"cuda:0"}, 1, 1, None),  # one visible GPU per process
        ({"cpu"}, 1, 2, None),
        ({"cuda:0", "cuda:1"}, 1, 2, None),
    ],
)
def test_a_rank_on_another_ranks_gpu(devices: set[str], local_rank: int, visible: int, expected: int | None) -> None:
    torch = pytest.importorskip("torch")
    from torchlint.runtime_probe.ddp import misplaced

    assert misplaced({torch.device(d) for d in devices}, local_rank, visible) == expected


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _loader_wait(load: float, compute: float, steps: int, active: bool = True) -> list[Event]:
    from torchlint.runtime_probe.data import LoaderWaitCheck

    class Loader:
        pass

    class Iterator:
        pass

    clock = _Clock()
    check = LoaderWaitCheck(lambda f: f, lambda: active, clock)
    loader, iterator = Loader(), Iterator()
    check.wrap_loader_init(lambda loader: None)(loader)  # line: loader-built
    check.wrap_iterator_init(lambda iterator, loader: None)(iterator, loader)

    def next_data(_: object) -> None:
        clock.now += load

    wrapped = check.wrap_next_data(next_data)
    for _ in range(steps):
        wrapped(iterator)
        clock.now += compute
        check.after_step()
    return check.events(final=True)


def test_waiting_for_batches_is_measured_against_the_loop() -> None:
    pytest.importorskip("torch")
    [starved] = _loader_wait(load=0.03, compute=0.01, steps=10)
    assert starved.weak and starved.evidence["wait_share"] == 0.75 and starved.evidence["measured_steps"] == 8
    assert (starved.filename, starved.line) == (__file__, line_of(Path(__file__), "loader-built"))
    [fed] = _loader_wait(load=0.001, compute=0.01, steps=10)
    assert fed.benign and fed.evidence["wait_share"] < 0.2
    assert _loader_wait(load=0.03, compute=0.01, steps=10, active=False) == []
    assert _loader_wait(load=0.03, compute=0.01, steps=4) == []


def test_text_tracebacks_show_the_users_frames_only() -> None:
    site = sysconfig.get_paths()["purelib"]
    trace = textwrap.dedent(
        f"""\
        Traceback (most recent call last):
          File "/home/me/train.py", line 8, in <module>
            out = model(batch)
          File "{site}/torch/nn/modules/module.py", line 1775, in _call_impl
            return forward_call(*args, **kwargs)
          File "{site}/torch/nn/modules/linear.py", line 134, in forward
            return F.linear(input, self.weight, self.bias)
        RuntimeError: Tensor on device meta is not on the expected device cpu!
        """
    )
    assert text_report.user_traceback(trace) == [
        "Traceback (most recent call last):",
        '  File "/home/me/train.py", line 8, in <module>',
        "    out = model(batch)",
        "  ...",
        "RuntimeError: Tensor on device meta is not on the expected device cpu!",
    ]


# --- the probe and the rules agree -----------------------------------------------------------


def _rules_with(attribute: str) -> list:
    from torchlint.registry import all_rules

    return [pytest.param(rule, id=rule.CODE) for rule in all_rules() if getattr(rule, attribute, None)]


@pytest.mark.parametrize("rule", _rules_with("CONFIRMED_BY"))
def test_a_rule_confirmed_by_the_probe_has_a_probe_check(rule) -> None:
    from torchlint.runtime_probe.statuses import CHECKS

    check = CHECKS.get(rule.CODE)
    assert check is not None, f"{rule.CODE} declares CONFIRMED_BY {rule.CONFIRMED_BY} but the probe cannot check it"
    assert check.event in (*rule.CONFIRMED_BY, rule.CODE)


@pytest.mark.parametrize("rule", _rules_with("CODE"))
def test_the_probe_names_static_codes_as_the_rules_do(rule) -> None:
    from torchlint.runtime_probe.protocol import STATIC_NAMES

    assert STATIC_NAMES.get(rule.CODE, rule.NAME) == rule.NAME


# --- how a run ended: failed, or stopped by a bound ------------------------------------------


def run_end(**changes) -> ending.Ending:
    facts = dict(
        returncode=0,
        timed_out=False,
        duration=4.2,
        steps=20,
        stopped=None,
        crash=None,
        reported=True,
        output_tail="",
        max_steps=20,
        timeout=300.0,
    )
    return ending.ending(**{**facts, **changes})


def test_an_import_error_before_the_first_step_is_a_crash_at_the_import() -> None:
    crash = Crash("ModuleNotFoundError", "No module named 'wandb'", "Traceback ...", "train.py", 3)
    end = run_end(returncode=1, steps=0, crash=crash)
    assert end.outcome is ending.Outcome.CRASHED and end.failed and end.crashed_at == "train.py:3"
    assert end.failure() == "the script crashed at train.py:3 before its first step: ModuleNotFoundError: No module named 'wandb'"


def test_only_a_script_that_could_not_start_failed_to_start() -> None:
    syntax = Crash("SyntaxError", "invalid syntax (train.py, line 4)", "", "train.py", 4, started=False)
    end = run_end(returncode=1, steps=0, crash=syntax)
    assert end.outcome is ending.Outcome.FAILED_TO_START and end.failed and end.crashed_at == ""
    assert end.failure() == "the script could not start: SyntaxError: invalid syntax (train.py, line 4)"
    unreadable = run_end(returncode=2, steps=0, crash=Crash("OSError", "cannot read train.py: permission denied", "", started=False))
    assert unreadable.failure() == "the script could not start: OSError: cannot read train.py: permission denied"
    silent = run_end(returncode=1, steps=0, reported=False)
    assert silent.outcome is ending.Outcome.FAILED_TO_START
    assert silent.failure() == "the probe heard nothing from the script: its process exited with status 1 before writing a report"


def test_a_usage_error_exits_with_an_error_and_names_the_scripts_last_line_of_output() -> None:
    tail = "usage: train.py [-h] --data DATA\ntrain.py: error: the following arguments are required: --data\n"
    end = run_end(returncode=2, steps=0, output_tail=tail)
    assert end.outcome is ending.Outcome.EXITED_WITH_ERROR and end.failed
    assert end.failure() == (
        "the script exited with status 2 before its first step: "
        "train.py: error: the following arguments are required: --data"
    )


def test_a_crash_after_some_steps_and_a_kill_by_signal() -> None:
    assert run_end(returncode=1, steps=3, crash=Crash("ValueError", "boom\nmore", "", "loop.py", 9)).failure() == (
        "the script crashed at loop.py:9 after 3 steps: ValueError: boom"
    )
    # Raised where no frame is the user's (a C++ thread, a library's atexit hook).
    assert run_end(returncode=1, steps=3, crash=Crash("ValueError", "boom", "")).failure() == (
        "the script crashed after 3 steps: ValueError: boom"
    )
    killed = run_end(returncode=-9, steps=0, reported=False)
    assert killed.outcome is ending.Outcome.CRASHED
    assert killed.failure() == "the script was killed by SIGKILL and left the probe no report"
    assert run_end(returncode=0, reported=False).failed, "no report is no pass"
    # A `.view()` that raises at the first forward pass: the bug itself, past the start.
    view = run_end(returncode=1, steps=0, crash=Crash("RuntimeError", "view size", "", "model.py", 39))
    assert view.outcome is ending.Outcome.CRASHED and view.failure() == "the script crashed at model.py:39 before its first step: RuntimeError: view size"


@pytest.mark.parametrize(
    "changes, outcome, advice",
    [
        ({"stopped": "max-steps"}, ending.Outcome.STEP_LIMIT, "step limit (20 steps) before this line ran; raise --max-steps"),
        ({"timed_out": True, "returncode": 143, "steps": 7}, ending.Outcome.TIMED_OUT, "after 300 s and 7 steps, before this line ran; raise --timeout"),
        ({"steps": 5}, ending.Outcome.ENDED, "ended normally after 5 steps and 4.2 s without running this line"),
    ],
)
def test_not_reached_says_which_bound_stopped_the_run(changes, outcome, advice: str) -> None:
    end = run_end(**changes)
    assert end.outcome is outcome and not end.failed
    assert advice in end.why_not_reached()


def test_a_failed_run_makes_unreached_findings_failed_and_reached_ones_keep_their_status(script: Path) -> None:
    end = run_end(returncode=1, steps=0, crash=Crash("FileNotFoundError", "[Errno 2] No such file: 'data.csv'", ""))
    findings = [static(script, "TL001", "step"), static(script, "TL001", "unused-step")]
    results = assign(findings, [rank([], [11])], str(script), SCRIPT_SOURCE, ending=end)
    by_line = {r.line: r for r in results}
    assert by_line[11].status is Status.NOT_REPRODUCED
    assert by_line[7].status is Status.FAILED
    assert by_line[7].evidence["reason"].endswith("FileNotFoundError: [Errno 2] No such file: 'data.csv'")
    stopped = assign(findings[1:], [rank([], [11])], str(script), SCRIPT_SOURCE, ending=run_end(stopped="max-steps"))
    assert [(r.status, "raise --max-steps" in r.evidence["reason"]) for r in stopped] == [(Status.NOT_REACHED, True)]


def failed_result(script: Path) -> ProbeResult:
    """Three scripts that fail on their own: one raises at its import (it started), one
    exits with a usage error, one has a syntax error (it never started)."""
    crash = Crash("ModuleNotFoundError", "No module named 'wandb'", "Traceback ...\nModuleNotFoundError: No module named 'wandb'\n", "train.py", 1)
    end = run_end(returncode=1, steps=0, crash=crash)
    findings = assign([static(script, "TL001", "step", "train.py")], [rank([], [])], str(script), SCRIPT_SOURCE, ending=end)
    ranks = (RankReport(0, 1, False, 0, (), (), (), exit_code=1, crash=crash),)
    failed = ScriptResult("train.py", 1, False, 2.0, 0, (), tuple(findings), 20, 300.0, crash=crash, ranks=ranks)
    usage_tail = "usage: eval.py [-h] --data DATA\neval.py: error: the following arguments are required: --data"
    usage = ScriptResult("eval.py", 2, False, 1.0, 0, (), (), 20, 300.0, ranks=(rank([], []),), output_tail=usage_tail)
    syntax = Crash("SyntaxError", "invalid syntax (broken.py, line 2)", '  File "broken.py", line 2\nSyntaxError: invalid syntax\n', "broken.py", 2, started=False)
    broken_ranks = (RankReport(0, 2, False, 0, (), (), (), exit_code=1, crash=syntax),)
    broken = ScriptResult("broken.py", 1, False, 0.5, 0, (), (), 20, 300.0, crash=syntax, ranks=broken_ranks)
    return ProbeResult((failed, usage, broken))


def test_every_report_format_says_crashed_at_a_line_or_failed_to_start_alike(script: Path) -> None:
    result = failed_result(script)
    crashed = "the script crashed at train.py:1 before its first step: ModuleNotFoundError: No module named 'wandb'"
    exited = "the script exited with status 2 before its first step: eval.py: error: the following arguments are required: --data"
    not_started = "the script could not start: SyntaxError: invalid syntax (broken.py, line 2)"
    text = text_report.render(result)
    assert "train.py: 0 steps, crashed at train.py:1 with exit status 1 (ModuleNotFoundError: No module named 'wandb')" in text
    assert "train.py:11: TL001 [missing-zero-grad] failed" in text
    assert f"its line never ran: {crashed}" in text
    assert "eval.py: 0 steps, exited with an error, exit status 2" in text
    assert f"nothing found: {exited}" in text
    assert "eval.py: error: the following arguments are required: --data" in text, "the tail of its output"
    assert "broken.py: 0 steps, failed to start, exit status 1 (SyntaxError: invalid syntax (broken.py, line 2))" in text
    assert f"nothing found: {not_started}" in text
    assert "Probed 3 scripts: 1 failed to start, 1 crashed, 1 exited with an error; 1 finding: 1 failed." in text
    assert "crashed with" not in text.replace("crashed at train.py:1 with", ""), "every crash names its line"
    data = json.loads(json_report.render(result))
    train, usage, broken = data["scripts"]
    assert (train["outcome"], train["findings"][0]["status"]) == ("crashed", "failed")
    assert (train["failure"], train["crashed_at"], train["crash"]["where"]) == (crashed, "train.py:1", "train.py:1")
    assert (usage["outcome"], usage["failure"], usage["crashed_at"]) == ("exited-with-error", exited, None)
    assert "usage: eval.py" in usage["output_tail"]
    assert (broken["outcome"], broken["failure"], broken["crashed_at"], broken["crash"]["started"]) == ("failed-to-start", not_started, None, False)
    suite = ET.fromstring(junit_report.render(result)).find("testsuite")
    assert suite is not None and suite.get("errors") == "3" and suite.get("failures") == "0"
    errors = {case.get("name"): case.find("error") for case in suite.iter("testcase")}
    assert (errors["train.py"].get("type"), errors["train.py"].get("message")) == ("ModuleNotFoundError", crashed)
    assert (errors["eval.py"].get("type"), errors["eval.py"].get("message")) == ("exited-with-error", exited)
    assert "usage: eval.py" in errors["eval.py"].text
    assert (errors["broken.py"].get("type"), errors["broken.py"].get("message")) == ("SyntaxError", not_started)
    [annotation] = as_findings(result)
    assert (annotation.severity.value, annotation.line) == ("warning", 11)
    assert annotation.message.startswith(f"not checked at runtime, {crashed}")
    assert result.has_failures and not result.has_findings
