"""TL103 memory-growth and TL104 memory-fragmentation on CUDA, from
`torch.cuda.memory_stats()` sampled after every training step (on simulated CUDA, the
statistics of the simulator's caching-allocator model).

TL104 has two signs. Split blocks: reserved memory far above allocated with most of the
idle part in inactive split blocks, or allocator retries and OOMs. Idle segments:
reserved memory many times the peak allocated, so that whole cached segments sit idle;
that is what shapes growing step after step do (longer sequences each step: no cached
segment fits the next request, so a new one is reserved and the old ones stay cached)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from torchlint.runtime_probe.protocol import Event, Frame

MIB = 1024 * 1024
WARMUP_STEPS = 2
MIN_GROWTH_STEPS = 5
MIN_GROWTH_BYTES = 4 * MIB
MIN_GROWING_SHARE = 0.8
MIN_IDLE_RESERVED = 256 * MIB
# Reserved at least this many times the peak allocated: whole segments sit idle.
IDLE_SEGMENTS_RATIO = 3


@dataclass(frozen=True)
class Sample:
    step: int
    allocated: int
    reserved: int
    inactive_split: int
    retries: int
    ooms: int
    peak_allocated: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "allocated_bytes": self.allocated,
            "reserved_bytes": self.reserved,
            "inactive_split_bytes": self.inactive_split,
            "num_alloc_retries": self.retries,
            "num_ooms": self.ooms,
            "peak_allocated_bytes": self.peak_allocated,
        }

    @property
    def fragmented(self) -> bool:
        idle = self.reserved - self.allocated
        return idle >= MIN_IDLE_RESERVED and 2 * self.inactive_split >= idle and 2 * self.reserved >= 3 * self.allocated

    @property
    def idle_segments(self) -> bool:
        """Reserved memory many times anything the script ever had allocated (judged only
        with the peak known: at a step's end most of its activations are already freed)."""
        peak = max(self.peak_allocated, self.allocated)
        return bool(self.peak_allocated) and self.reserved - peak >= MIN_IDLE_RESERVED and self.reserved >= IDLE_SEGMENTS_RATIO * peak


def _mib(n: float) -> str:
    return f"{n / MIB:.1f} MiB"


class CudaMemoryCheck:
    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self._stack: tuple[Frame, ...] = ()

    def after_step(self, step: int, stack: tuple[Frame, ...]) -> dict[str, Any]:
        stats = torch.cuda.memory_stats()
        sample = Sample(
            step,
            stats.get("allocated_bytes.all.current", 0),
            stats.get("reserved_bytes.all.current", 0),
            stats.get("inactive_split_bytes.all.current", 0),
            stats.get("num_alloc_retries", 0),
            stats.get("num_ooms", 0),
            stats.get("allocated_bytes.all.peak", 0),
        )
        self.add(sample, stack)
        return sample.to_dict()

    def add(self, sample: Sample, stack: tuple[Frame, ...]) -> None:
        self.samples.append(sample)
        self._stack = self._stack or stack

    def events(self, final: bool) -> list[Event]:
        if not self._stack:
            return []
        return [e for e in (self._growth(), self._fragmentation()) if e is not None]

    def _growth(self) -> Event | None:
        samples = self.samples[WARMUP_STEPS:]
        if len(samples) < MIN_GROWTH_STEPS:
            return None
        deltas = [b.allocated - a.allocated for a, b in zip(samples, samples[1:])]
        total = samples[-1].allocated - samples[0].allocated
        if total < MIN_GROWTH_BYTES or sum(d > 0 for d in deltas) < MIN_GROWING_SHARE * len(deltas):
            return None
        per_step = total / len(deltas)
        first, last = samples[0], samples[-1]
        message = (
            f"allocated CUDA memory grew by {_mib(per_step)} per step, from {_mib(first.allocated)} after step "
            f"{first.step} to {_mib(last.allocated)} after step {last.step}: something keeps each step's tensors alive"
        )
        evidence = {
            "growth_per_step_bytes": int(per_step),
            "allocated_bytes": {str(s.step): s.allocated for s in samples},
        }
        return Event("TL103", self._stack, message, evidence)

    def _fragmentation(self) -> Event | None:
        last = self.samples[-1]
        fragmented = [s for s in self.samples if s.fragmented]
        if not (last.retries or last.ooms or fragmented):
            return self._idle_segments()
        retried = next((s for s in self.samples if s.retries or s.ooms), None)
        peak = max(fragmented or self.samples, key=lambda s: s.reserved - s.allocated)
        causes = []
        if last.retries:
            causes.append(f"{last.retries} allocator retries (first after step {retried.step if retried else '?'})")
        if last.ooms:
            causes.append(f"{last.ooms} out-of-memory errors")
        causes.append(
            f"reserved {_mib(peak.reserved)} against {_mib(peak.allocated)} allocated at step {peak.step}, "
            f"{_mib(peak.inactive_split)} in inactive split blocks"
        )
        message = (
            f"CUDA memory is fragmented: {'; '.join(causes)}; try "
            "`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` or fixed-size buffers"
        )
        evidence = {"peak_step": peak.step, **peak.to_dict(), "num_alloc_retries": last.retries, "num_ooms": last.ooms}
        return Event("TL104", self._stack, message, evidence)

    def _idle_segments(self) -> Event | None:
        idle = [s for s in self.samples if s.idle_segments]
        if not idle:
            return None
        worst = max(idle, key=lambda s: s.reserved / max(s.peak_allocated, s.allocated, 1))
        peak = max(worst.peak_allocated, worst.allocated)
        message = (
            f"CUDA memory is fragmented: {_mib(worst.reserved)} reserved after step {worst.step} against a peak of "
            f"{_mib(peak)} allocated ({worst.reserved / max(peak, 1):.1f}x): whole cached segments sit idle because "
            "tensor sizes keep changing (growing sequence lengths?) and no cached segment fits the next request; set "
            "`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, or bucket or pad the lengths to a few fixed sizes"
        )
        evidence = {"peak_step": worst.step, **worst.to_dict(), "reserved_per_peak_allocated": round(worst.reserved / max(peak, 1), 2)}
        return Event("TL104", self._stack, message, evidence)
