"""A model of PyTorch's CUDA caching allocator (`c10/cuda/CUDACachingAllocator.cpp`,
`DeviceCachingAllocator`) for one device and one stream, fed by the simulator's
allocation and free events. Pure Python, no torch.

Modelled: `round_size` (512 B), the small (<= 1 MiB) and large pools, segment sizes
(2 MiB for small requests, 20 MiB for requests below 10 MiB, larger ones rounded up to
2 MiB), best-fit block search ordered by (size, address), the `max_split_size_mb` rules
(no oversize block for a smaller request; an oversize request takes a block below its
size + 20 MiB), `should_split`, merging with free neighbours on free, the
`inactive_split` statistics, the out-of-memory path (free cached oversize blocks, then
every cached segment and retry, counted in `num_alloc_retries`; then `num_ooms` and
`OutOfMemory` in CUDA's message format), `empty_cache`, and `expandable_segments` (one
growing segment per pool mapped in 2 MiB / 20 MiB pages; `empty_cache` unmaps whole free
pages).

Not modelled: `roundup_power2_divisions`, several streams and `record_stream` delays,
CUDA graph pools, `garbage_collection_threshold`, `per_process_memory_fraction`, and
memory that never appears as a tensor (the CUDA context, cuBLAS/cuDNN workspaces,
kernel temporaries): absolute numbers are estimates, step-to-step shapes are the
trustworthy part.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field

MIB = 1 << 20
MIN_BLOCK = 512
SMALL_SIZE = 1 * MIB
SMALL_BUFFER = 2 * MIB
LARGE_BUFFER = 20 * MIB
MIN_LARGE_ALLOC = 10 * MIB
ROUND_LARGE = 2 * MIB
# Large enough that an expandable segment never runs out of address space.
_EXPANDABLE_SPAN = 1 << 50
POOLS = ("small_pool", "large_pool")
STAT_NAMES = (
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
)


class OutOfMemory(Exception):
    """The simulated device has no room left, after freeing the cache and retrying."""


@dataclass(eq=False, slots=True)
class Block:
    """A piece of a segment; blocks of one segment form a doubly linked list by address."""

    addr: int
    size: int
    small: bool
    expandable: bool = False
    mapped: bool = True
    allocated: bool = False
    requested: int = 0
    prev: Block | None = field(default=None, repr=False)
    next: Block | None = field(default=None, repr=False)
    serial: int = field(default_factory=itertools.count().__next__)

    @property
    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None


# Statistics live in flat lists (every allocation and free updates several: this is the
# simulator's hot path), at a statistic's base + 0 (all), 1 (small pool), 2 (large pool).
# With no stream delays modelled (`record_stream`), a block is active exactly while it is
# allocated: the active statistics are the allocation ones, kept once.
_KEPT = [name for name in STAT_NAMES if name not in ("active", "active_bytes")]
_BASE = {name: 3 * i for i, name in enumerate(_KEPT)}
_BASE.update(active=_BASE["allocation"], active_bytes=_BASE["allocated_bytes"])
_ALLOCATION, _SEGMENT, _INACTIVE_SPLIT, _ALLOCATED_BYTES, _RESERVED_BYTES, _INACTIVE_SPLIT_BYTES, _REQUESTED_BYTES = (_BASE[name] for name in _KEPT)


@dataclass(frozen=True)
class AllocatorConfig:
    total_memory: int = 80 * (1 << 30)
    max_split_size_mb: int | None = None
    expandable_segments: bool = False


def parse_alloc_conf(text: str) -> tuple[int | None, bool]:
    """`max_split_size_mb` and `expandable_segments` from a `PYTORCH_CUDA_ALLOC_CONF` value."""
    max_split: int | None = None
    expandable = False
    for item in text.split(","):
        key, _, value = item.partition(":")
        key, value = key.strip(), value.strip()
        if key == "max_split_size_mb" and value.isdigit():
            max_split = int(value)
        elif key == "expandable_segments":
            expandable = value.lower() == "true"
    return max_split, expandable


def round_size(nbytes: int) -> int:
    return MIN_BLOCK if nbytes < MIN_BLOCK else MIN_BLOCK * ((nbytes + MIN_BLOCK - 1) // MIN_BLOCK)


def segment_size(size: int) -> int:
    """The size of a new segment for a (rounded) request (`get_allocation_size`)."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)


def format_bytes(n: int) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.2f} {unit}"
    return f"{n} bytes"


class CachingAllocator:
    def __init__(self, config: AllocatorConfig = AllocatorConfig()) -> None:
        self.capacity = config.total_memory
        self.max_split: float = config.max_split_size_mb * MIB if config.max_split_size_mb else math.inf
        self.expandable = config.expandable_segments
        self._free: dict[bool, list[tuple[int, int, int, Block]]] = {True: [], False: []}
        size = 3 * len(_KEPT)
        self._current = [0] * size
        self._peak = [0] * size
        self._allocated = [0] * size
        self._freed = [0] * size
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_device_alloc = 0
        self.num_device_free = 0
        self.total_reserved = 0
        self._next_addr = 1 << 40
        self._expandable_head: dict[bool, Block] = {}

    # --- bookkeeping -------------------------------------------------------------------

    def _count(self, small: bool, *changes: tuple[int, int]) -> None:
        """Apply (statistic, amount) changes to the totals and to the block's pool."""
        current = self._current
        pool = 1 if small else 2
        for base, amount in changes:
            i = base + pool
            if amount >= 0:
                peak, allocated = self._peak, self._allocated
                total = current[base] = current[base] + amount
                if total > peak[base]:
                    peak[base] = total
                total = current[i] = current[i] + amount
                if total > peak[i]:
                    peak[i] = total
                allocated[base] += amount
                allocated[i] += amount
            else:
                freed = self._freed
                current[base] += amount
                current[i] += amount
                freed[base] -= amount
                freed[i] -= amount

    def _insert(self, block: Block) -> None:
        bisect.insort(self._free[block.small], (block.size, block.addr, block.serial, block))

    def _remove(self, block: Block) -> None:
        free = self._free[block.small]
        i = bisect.bisect_left(free, (block.size, block.addr, block.serial))
        if i >= len(free) or free[i][3] is not block:
            raise AssertionError("allocator model: free list out of order")
        free.pop(i)

    def free_blocks(self) -> list[Block]:
        return [entry[3] for small in (True, False) for entry in self._free[small]]

    def segments_of(self, live: list[Block]) -> list[list[Block]]:
        """Every segment that holds a free block or one of `live`."""
        heads: dict[int, Block] = {}
        for block in (*self.free_blocks(), *live):
            while block.prev is not None:
                block = block.prev
            heads[id(block)] = block
        return [self._chain(head) for head in heads.values()]

    @staticmethod
    def _chain(head: Block) -> list[Block]:
        chain = []
        block: Block | None = head
        while block is not None:
            chain.append(block)
            block = block.next
        return chain

    # --- malloc ------------------------------------------------------------------------

    def malloc(self, nbytes: int) -> Block | None:
        """A block for `nbytes`; None for an empty request. Raises OutOfMemory."""
        if nbytes <= 0:
            return None
        size = round_size(nbytes)
        small = size <= SMALL_SIZE
        block = self._find_free(small, size)
        if block is None:
            block = self._new_block(small, size)
        if block is None and self._release_oversize(small, size):
            block = self._new_block(small, size)
        if block is None:
            self._release_cached()
            self.num_alloc_retries += 1
            block = self._new_block(small, size)
        if block is None:
            self.num_ooms += 1
            allocated = self._current[_BASE["allocated_bytes"]]
            reserved = self._current[_BASE["reserved_bytes"]]
            raise OutOfMemory(
                f"CUDA out of memory. Tried to allocate {format_bytes(segment_size(size))}. GPU 0 has a total "
                f"capacity of {format_bytes(self.capacity)} of which {format_bytes(self.capacity - self.total_reserved)} "
                f"is free. Of the allocated memory {format_bytes(allocated)} is allocated by PyTorch, and "
                f"{format_bytes(reserved - allocated)} is reserved by PyTorch but unallocated. (simulated CUDA)"
            )
        return self._use(block, size, nbytes)

    def _find_free(self, small: bool, size: int) -> Block | None:
        free = self._free[small]
        i = bisect.bisect_left(free, (size, -1, -1))
        if self.expandable:
            # Best fit, but a block that can still grow into unmapped space comes last.
            fallback = None
            for entry in free[i:]:
                block = entry[3]
                growable = block.next is not None and not block.next.mapped
                if not growable:
                    self._remove(block)
                    return block
                fallback = fallback or block
            if fallback is not None:
                self._remove(fallback)
            return fallback
        if i == len(free):
            return None
        block = free[i][3]
        if size < self.max_split <= block.size:
            return None
        if size >= self.max_split and block.size >= size + LARGE_BUFFER:
            return None
        free.pop(i)
        return block

    def _new_block(self, small: bool, size: int) -> Block | None:
        if self.expandable:
            return self._grow_expandable(small, size)
        nbytes = segment_size(size)
        if self.total_reserved + nbytes > self.capacity:
            return None
        block = Block(self._next_addr, nbytes, small)
        self._next_addr += nbytes + (1 << 30)
        self.total_reserved += nbytes
        self._count(small, (_SEGMENT, 1), (_RESERVED_BYTES, nbytes))
        self.num_device_alloc += 1
        return block

    def _grow_expandable(self, small: bool, size: int) -> Block | None:
        head = self._expandable_head.get(small)
        if head is None:
            base = (self._next_addr // LARGE_BUFFER + 1) * LARGE_BUFFER
            head = Block(base, _EXPANDABLE_SPAN, small, expandable=True, mapped=False)
            self._next_addr = base + 2 * _EXPANDABLE_SPAN
            self._expandable_head[small] = head
        # The lowest unmapped block, with its free mapped predecessor, that has room.
        candidate = None
        block: Block | None = head
        while block is not None and candidate is None:
            if not block.mapped:
                start = block.prev if (block.prev is not None and block.prev.mapped and not block.prev.allocated) else block
                room = 0
                cursor: Block | None = start
                while cursor is not None and not cursor.allocated and room < size:
                    room += cursor.size
                    cursor = cursor.next
                if room >= size:
                    candidate = start
            block = block.next
        if candidate is None:
            return None
        if not candidate.mapped:
            mapped = self._map(candidate, min(candidate.size, size))
            if mapped is None:
                return None
            candidate = mapped
        while candidate.size < size:
            following = candidate.next
            assert following is not None
            if following.mapped:
                self._remove(following)
                self._remove(candidate)
                self._absorb(candidate, following)
                self._insert(candidate)
                continue
            mapped = self._map(following, min(following.size, size - candidate.size))
            if mapped is None:
                return None
            candidate = mapped
        self._remove(candidate)
        return candidate

    def _map(self, block: Block, nbytes: int) -> Block | None:
        """Map pages at the start of an unmapped block; returns the merged free block."""
        page = SMALL_BUFFER if block.small else LARGE_BUFFER
        amount = min(block.size, page * math.ceil(nbytes / page))
        if self.total_reserved + amount > self.capacity:
            return None
        self.total_reserved += amount
        self._count(block.small, (_RESERVED_BYTES, amount))
        self.num_device_alloc += 1
        if amount < block.size:
            rest = Block(block.addr + amount, block.size - amount, block.small, expandable=True, mapped=False)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = amount
        block.mapped = True
        for neighbour in (block.prev, block.next):
            if neighbour is not None and neighbour.mapped and not neighbour.allocated:
                self._remove(neighbour)
                self._absorb(block, neighbour)
        self._insert(block)
        return block

    def _absorb(self, block: Block, neighbour: Block) -> None:
        """`block` takes over its free neighbour's bytes."""
        if neighbour is block.next:
            block.size += neighbour.size
            block.next = neighbour.next
            if neighbour.next is not None:
                neighbour.next.prev = block
        else:
            block.addr = neighbour.addr
            block.size += neighbour.size
            block.prev = neighbour.prev
            if neighbour.prev is not None:
                neighbour.prev.next = block
            if self._expandable_head.get(block.small) is neighbour:
                self._expandable_head[block.small] = block

    def _should_split(self, block: Block, size: int) -> bool:
        remaining = block.size - size
        if block.small or self.expandable:
            return remaining >= MIN_BLOCK
        return size < self.max_split and remaining > SMALL_SIZE

    def _use(self, block: Block, size: int, requested: int) -> Block:
        was_split = block.is_split
        # Counted in one call: this runs for every simulated allocation.
        changes = [(_ALLOCATION, 1), (_REQUESTED_BYTES, requested)]
        if self._should_split(block, size):
            rest = Block(block.addr + size, block.size - size, block.small, expandable=block.expandable)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            self._insert(rest)
            if not block.expandable:
                if was_split:
                    changes.append((_INACTIVE_SPLIT_BYTES, -size))
                else:
                    changes += ((_INACTIVE_SPLIT_BYTES, rest.size), (_INACTIVE_SPLIT, 1))
        elif was_split and not block.expandable:
            changes += ((_INACTIVE_SPLIT_BYTES, -block.size), (_INACTIVE_SPLIT, -1))
        block.allocated = True
        block.requested = requested
        changes.append((_ALLOCATED_BYTES, block.size))
        self._count(block.small, *changes)
        return block

    # --- free --------------------------------------------------------------------------

    def free(self, block: Block | None) -> None:
        if block is None:
            return
        block.allocated = False
        size = block.size
        split_blocks = split_bytes = 0
        for neighbour in (block.prev, block.next):
            if neighbour is not None and not neighbour.allocated and neighbour.mapped == block.mapped:
                self._remove(neighbour)
                split_blocks -= 1
                split_bytes -= neighbour.size
                self._absorb(block, neighbour)
        self._insert(block)
        if block.is_split:
            split_blocks += 1
            split_bytes += block.size
        changes = [(_ALLOCATION, -1), (_ALLOCATED_BYTES, -size), (_REQUESTED_BYTES, -block.requested)]
        if not block.expandable:
            if split_blocks:
                changes.append((_INACTIVE_SPLIT, split_blocks))
            if split_bytes:
                changes.append((_INACTIVE_SPLIT_BYTES, split_bytes))
        self._count(block.small, *changes)

    # --- giving memory back ------------------------------------------------------------

    def _release_segment(self, block: Block) -> None:
        self._remove(block)
        self.total_reserved -= block.size
        self._count(block.small, (_SEGMENT, -1), (_RESERVED_BYTES, -block.size))
        self.num_device_free += 1

    def _release_oversize(self, small: bool, size: int) -> bool:
        """`release_available_cached_blocks`: free cached whole segments at or above
        max_split_size to make room; only with `max_split_size_mb` set."""
        if self.max_split == math.inf:
            return False
        wanted = max(size, int(self.max_split))
        free = self._free[small]
        i = bisect.bisect_left(free, (wanted, -1, -1))
        if i < len(free):
            block = free[i][3]
            if block.is_split:
                return False
            self._release_segment(block)
            return True
        released = 0
        for entry in reversed(list(free)):
            block = entry[3]
            if released >= wanted or block.size < self.max_split:
                break
            if not block.is_split:
                released += block.size
                self._release_segment(block)
        return released >= wanted

    def _release_cached(self) -> None:
        for small in (False, True):
            for entry in list(self._free[small]):
                block = entry[3]
                if block.expandable:
                    self._unmap(block)
                elif not block.is_split:
                    self._release_segment(block)

    def _unmap(self, block: Block) -> None:
        """Unmap the whole pages inside a free block of an expandable segment."""
        page = SMALL_BUFFER if block.small else LARGE_BUFFER
        low = page * math.ceil(block.addr / page)
        high = page * math.floor((block.addr + block.size) / page)
        if high <= low:
            return
        self._remove(block)
        pieces = []
        if low > block.addr:
            pieces.append((block.addr, low - block.addr, True))
        pieces.append((low, high - low, False))
        if block.addr + block.size > high:
            pieces.append((high, block.addr + block.size - high, True))
        last = block.prev
        first: Block | None = None
        for addr, size, mapped in pieces:
            piece = Block(addr, size, block.small, expandable=True, mapped=mapped)
            piece.prev = last
            if last is not None:
                last.next = piece
            last = piece
            first = first or piece
            if mapped:
                self._insert(piece)
        assert last is not None and first is not None
        last.next = block.next
        if block.next is not None:
            block.next.prev = last
        if self._expandable_head.get(block.small) is block:
            self._expandable_head[block.small] = first
        self.total_reserved -= high - low
        self._count(block.small, (_RESERVED_BYTES, -(high - low)))
        self.num_device_free += 1
        unmapped = next(p for p in self._chain_between(first, last) if not p.mapped)
        for neighbour in (unmapped.prev, unmapped.next):
            if neighbour is not None and not neighbour.mapped and not neighbour.allocated:
                self._absorb(unmapped, neighbour)

    @staticmethod
    def _chain_between(first: Block, last: Block) -> list[Block]:
        chain, block = [first], first
        while block is not last and block.next is not None:
            block = block.next
            chain.append(block)
        return chain

    def empty_cache(self) -> None:
        self._release_cached()

    # --- reporting ---------------------------------------------------------------------

    def memory_stats(self) -> dict[str, int]:
        """The keys of `torch.cuda.memory_stats()` that the model keeps."""
        stats: dict[str, int] = {}
        for name in STAT_NAMES:
            base = _BASE[name]
            for offset, pool in enumerate(("all", *POOLS)):
                i = base + offset
                stats[f"{name}.{pool}.current"] = self._current[i]
                stats[f"{name}.{pool}.peak"] = self._peak[i]
                stats[f"{name}.{pool}.allocated"] = self._allocated[i]
                stats[f"{name}.{pool}.freed"] = self._freed[i]
        stats.update(
            {
                "num_alloc_retries": self.num_alloc_retries,
                "num_ooms": self.num_ooms,
                "num_device_alloc": self.num_device_alloc,
                "num_device_free": self.num_device_free,
                "max_split_size": -1 if self.max_split == math.inf else int(self.max_split),
            }
        )
        return stats

    def current(self, name: str) -> int:
        """`<name>.all.current` of `memory_stats()`, without building the whole dict."""
        return self._current[_BASE[name]]

    def peak(self, name: str) -> int:
        return self._peak[_BASE[name]]

    def reset_peak(self) -> None:
        self._peak[:] = self._current

    def reset_accumulated(self) -> None:
        self._allocated[:] = [0] * len(self._allocated)
        self._freed[:] = [0] * len(self._freed)
        self.num_alloc_retries = self.num_ooms = 0


@dataclass(frozen=True)
class ReplayResult:
    allocations: int
    model_reserved: int
    real_reserved: int
    # The largest |model - real| reserved bytes seen after any allocation.
    max_difference: int
    real_segments: int


def replay(trace: list[dict[str, object]], allocator: CachingAllocator) -> ReplayResult:
    """Replay a real allocator trace (one device's entries of a
    `torch.cuda.memory._snapshot()["device_traces"]`, recorded with
    `torch.cuda.memory._record_memory_history()`) through the model, comparing reserved
    bytes with what the real allocator reserved. The model frees its cache where the
    real one did (`segment_free`/`segment_unmap` after an `empty_cache` or a retry)."""
    live: dict[int, Block | None] = {}
    real = allocations = worst = segments = 0
    for entry in trace:
        action = entry.get("action")
        size = int(entry.get("size", 0))  # type: ignore[call-overload]
        addr = int(entry.get("addr", 0))  # type: ignore[call-overload]
        if action in ("segment_alloc", "segment_map"):
            real += size
            segments += 1
        elif action in ("segment_free", "segment_unmap"):
            real -= size
            if allocator.total_reserved > real:
                allocator.empty_cache()
        elif action == "alloc":
            live[addr] = allocator.malloc(size)
            allocations += 1
            worst = max(worst, abs(allocator.total_reserved - real))
        elif action == "free_completed" and addr in live:
            allocator.free(live.pop(addr))
    return ReplayResult(allocations, allocator.total_reserved, real, worst, segments)
