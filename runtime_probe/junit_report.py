"""The probe's JUnit XML: one test case per probed script, failing when the probe
confirmed or found something, in error when the script failed on its own (crashed, exited
with a non-zero status) or timed out."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from torchlint.runtime_probe.api import ProbeResult, ScriptResult
from torchlint.runtime_probe.statuses import FAILING
from torchlint.runtime_probe.text_report import render_script


def _case(suite: ET.Element, script: ScriptResult) -> tuple[bool, bool]:
    case = ET.SubElement(
        suite, "testcase", classname="torchlint.probe", name=script.path, time=f"{script.duration:.3f}"
    )
    failing = [f for f in script.findings if f.status in FAILING]
    if failing:
        summary = ", ".join(f"{f.code} {f.label} at line {f.line}" for f in failing)
        failure = ET.SubElement(case, "failure", message=summary, type="torchlint")
        failure.text = "\n".join(f"{f.filename}:{f.line}: {f.code} [{f.name}] {f.label}: {f.evidence.get('runtime_message', f.message)}" for f in failing)
    ending = script.ending
    errored = not failing and (script.timed_out or ending.failed)
    if errored:
        if script.timed_out:
            error = ET.SubElement(case, "error", message=f"timed out after {script.timeout:g} s", type="timeout")
            error.text = script.output_tail
        else:
            kind = script.crash.type if script.crash is not None else ending.outcome.value
            error = ET.SubElement(case, "error", message=ending.failure()[:500], type=kind)
            error.text = script.crash.traceback if script.crash is not None and script.crash.traceback else script.output_tail
    ET.SubElement(case, "system-out").text = render_script(script)
    return bool(failing), errored


def render(result: ProbeResult) -> str:
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name="torchlint probe")
    failures = errors = 0
    for script in result.scripts:
        failed, errored = _case(suite, script)
        failures += failed
        errors += errored
    suite.set("tests", str(len(result.scripts)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("time", f"{sum(s.duration for s in result.scripts):.3f}")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
