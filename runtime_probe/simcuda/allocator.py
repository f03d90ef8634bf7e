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

import math
from bisect import bisect_left, insort
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
# A free block's place in its pool's free list is the one integer size << _ADDRESS_BITS |
# address: ordered by (size, address) as the C++ set is, compared in C. Addresses stay
# below 2**_ADDRESS_BITS (checked where segments are placed).
_ADDRESS_BITS = 64
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

    @property
    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None


# Statistics live in flat lists (every allocation and free updates several: this is the
# simulator's hot path), per pool at a statistic's base + 0 (small pool) or + 1 (large
# pool). What `memory_stats()` reports is derived from them exactly: a total ("all") is
# the sum of the pools, except the total's peak, kept on its own; "freed" is what was
# added since the last reset, less what is left of it (allocated - current + current at
# the reset), so a free only lowers one number per statistic. With no stream delays
# modelled (`record_stream`), a block is active exactly while it is allocated: the
# active statistics are the allocation ones, kept once.
_KEPT = [name for name in STAT_NAMES if name not in ("active", "active_bytes")]
_BASE = {name: 2 * i for i, name in enumerate(_KEPT)}
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
        # Per pool (small: True), the sorted keys of its free blocks; and key -> block.
        self._free: dict[bool, list[int]] = {True: [], False: []}
        self._free_block: dict[int, Block] = {}
        size = 2 * len(_KEPT)
        self._current = [0] * size
        self._peak = [0] * size
        # At a statistic's base: the peak of its total.
        self._peak_all = [0] * size
        self._allocated = [0] * size
        self._current_at_reset = [0] * size
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_device_alloc = 0
        self.num_device_free = 0
        self.total_reserved = 0
        self._next_addr = 1 << 40
        self._expandable_head: dict[bool, Block] = {}

    # --- bookkeeping -------------------------------------------------------------------

    def _count(self, small: bool, *changes: tuple[int, int]) -> None:
        """Apply (statistic, amount) changes to the block's pool."""
        pool = 0 if small else 1
        for base, amount in changes:
            if amount >= 0:
                self._grow(base, pool, amount)
            else:
                self._current[base + pool] += amount

    def _grow(self, base: int, pool: int, amount: int) -> None:
        """Add `amount` (>= 0) to a statistic of a pool (0: small, 1: large)."""
        current = self._current
        i = base + pool
        total = current[i] = current[i] + amount
        if total > self._peak[i]:
            self._peak[i] = total
        self._allocated[i] += amount
        total = current[base] + current[base + 1]
        if total > self._peak_all[base]:
            self._peak_all[base] = total

    def _insert(self, block: Block) -> None:
        key = block.size << _ADDRESS_BITS | block.addr
        insort(self._free[block.small], key)
        self._free_block[key] = block

    def _remove(self, block: Block) -> None:
        free = self._free[block.small]
        key = block.size << _ADDRESS_BITS | block.addr
        i = bisect_left(free, key)
        if i >= len(free) or free[i] != key or self._free_block[key] is not block:
            raise AssertionError("allocator model: free list out of order")
        del free[i]
        del self._free_block[key]

    def free_blocks(self) -> list[Block]:
        return [self._free_block[key] for small in (True, False) for key in self._free[small]]

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
        size = MIN_BLOCK if nbytes < MIN_BLOCK else MIN_BLOCK * ((nbytes + MIN_BLOCK - 1) // MIN_BLOCK)  # round_size
        small = size <= SMALL_SIZE
        block = None
        if self.expandable:
            block = self._find_free_expandable(small, size)
        else:
            # Best fit from the cache, written out here: most simulated allocations
            # end with it.
            free = self._free[small]
            i = bisect_left(free, size << _ADDRESS_BITS)
            if i < len(free):
                key = free[i]
                found = self._free_block[key]
                max_split = self.max_split
                # No oversize block for a smaller request; an oversize request takes a
                # block below its size + 20 MiB.
                if not (size < max_split <= found.size or (size >= max_split and found.size >= size + LARGE_BUFFER)):
                    del free[i]
                    del self._free_block[key]
                    block = found
        if block is None:
            block = self._reserve(small, size)
        # Splitting (`should_split`) and the statistics, written out rather than called
        # (`_insert`, `_grow`).
        expandable = block.expandable
        pool = 0 if small else 1
        following = block.next
        was_split = block.prev is not None or following is not None
        remaining = block.size - size
        if remaining >= MIN_BLOCK if small or self.expandable else size < self.max_split and remaining > SMALL_SIZE:
            rest = Block(block.addr + size, remaining, small, expandable)
            rest.prev, rest.next = block, following
            if following is not None:
                following.prev = rest
            block.next = rest
            block.size = size
            key = remaining << _ADDRESS_BITS | rest.addr
            insort(self._free[small], key)
            self._free_block[key] = rest
            if not expandable:
                if was_split:
                    self._current[_INACTIVE_SPLIT_BYTES + pool] -= size
                else:
                    self._grow(_INACTIVE_SPLIT_BYTES, pool, remaining)
                    self._grow(_INACTIVE_SPLIT, pool, 1)
        elif was_split and not expandable:
            self._current[_INACTIVE_SPLIT_BYTES + pool] -= block.size
            self._current[_INACTIVE_SPLIT + pool] -= 1
        block.allocated = True
        block.requested = nbytes
        current, peak, peak_all, allocated = self._current, self._peak, self._peak_all, self._allocated
        i = _ALLOCATION + pool
        total = current[i] = current[i] + 1
        if total > peak[i]:
            peak[i] = total
        allocated[i] += 1
        total = current[_ALLOCATION] + current[_ALLOCATION + 1]
        if total > peak_all[_ALLOCATION]:
            peak_all[_ALLOCATION] = total
        i = _REQUESTED_BYTES + pool
        total = current[i] = current[i] + nbytes
        if total > peak[i]:
            peak[i] = total
        allocated[i] += nbytes
        total = current[_REQUESTED_BYTES] + current[_REQUESTED_BYTES + 1]
        if total > peak_all[_REQUESTED_BYTES]:
            peak_all[_REQUESTED_BYTES] = total
        granted = block.size  # the whole block when it was not split
        i = _ALLOCATED_BYTES + pool
        total = current[i] = current[i] + granted
        if total > peak[i]:
            peak[i] = total
        allocated[i] += granted
        total = current[_ALLOCATED_BYTES] + current[_ALLOCATED_BYTES + 1]
        if total > peak_all[_ALLOCATED_BYTES]:
            peak_all[_ALLOCATED_BYTES] = total
        return block

    def _reserve(self, small: bool, size: int) -> Block:
        """A new block from the device when the cache has none: a new segment, after
        releasing cached oversize blocks, after releasing the whole cache (a retry), or
        OutOfMemory."""
        block = self._new_block(small, size)
        if block is None and self._release_oversize(small, size):
            block = self._new_block(small, size)
        if block is None:
            self._release_cached()
            self.num_alloc_retries += 1
            block = self._new_block(small, size)
        if block is None:
            self.num_ooms += 1
            allocated = self.current("allocated_bytes")
            reserved = self.current("reserved_bytes")
            raise OutOfMemory(
                f"CUDA out of memory. Tried to allocate {format_bytes(segment_size(size))}. GPU 0 has a total "
                f"capacity of {format_bytes(self.capacity)} of which {format_bytes(self.capacity - self.total_reserved)} "
                f"is free. Of the allocated memory {format_bytes(allocated)} is allocated by PyTorch, and "
                f"{format_bytes(reserved - allocated)} is reserved by PyTorch but unallocated. (simulated CUDA)"
            )
        return block

    def _find_free_expandable(self, small: bool, size: int) -> Block | None:
        """Best fit, but a block that can still grow into unmapped space comes last."""
        free = self._free[small]
        fallback = None
        for j in range(bisect_left(free, size << _ADDRESS_BITS), len(free)):
            block = self._free_block[free[j]]
            following = block.next
            if following is None or following.mapped:
                del self._free_block[free[j]]
                del free[j]
                return block
            fallback = fallback or block
        if fallback is not None:
            self._remove(fallback)
        return fallback

    def _new_block(self, small: bool, size: int) -> Block | None:
        if self.expandable:
            return self._grow_expandable(small, size)
        nbytes = segment_size(size)
        if self.total_reserved + nbytes > self.capacity:
            return None
        block = Block(self._next_addr, nbytes, small)
        self._next_addr += nbytes + (1 << 30)
        if self._next_addr >= 1 << _ADDRESS_BITS:
            raise AssertionError("allocator model: out of simulated address space")
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
            if self._next_addr >= 1 << _ADDRESS_BITS:
                raise AssertionError("allocator model: out of simulated address space")
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

    # --- free --------------------------------------------------------------------------

    def free(self, block: Block | None) -> None:
        if block is None:
            return
        block.allocated = False
        size = block.size
        small, mapped = block.small, block.mapped
        free, free_block = self._free[small], self._free_block
        split_blocks = split_bytes = 0
        for neighbour in (block.prev, block.next):
            if neighbour is not None and not neighbour.allocated and neighbour.mapped == mapped:
                # `_remove(neighbour)`, written out: every free of a split block runs it.
                key = neighbour.size << _ADDRESS_BITS | neighbour.addr
                i = bisect_left(free, key)
                if i >= len(free) or free[i] != key or free_block[key] is not neighbour:
                    raise AssertionError("allocator model: free list out of order")
                del free[i]
                del free_block[key]
                split_blocks -= 1
                split_bytes -= neighbour.size
                self._absorb(block, neighbour)
        key = block.size << _ADDRESS_BITS | block.addr
        insort(free, key)
        free_block[key] = block
        if block.prev is not None or block.next is not None:
            split_blocks += 1
            split_bytes += block.size
        pool = 0 if small else 1
        current = self._current
        current[_ALLOCATION + pool] -= 1
        current[_ALLOCATED_BYTES + pool] -= size
        current[_REQUESTED_BYTES + pool] -= block.requested
        if not block.expandable:
            if split_blocks > 0:
                self._grow(_INACTIVE_SPLIT, pool, split_blocks)
            else:
                current[_INACTIVE_SPLIT + pool] += split_blocks
            if split_bytes > 0:
                self._grow(_INACTIVE_SPLIT_BYTES, pool, split_bytes)
            else:
                current[_INACTIVE_SPLIT_BYTES + pool] += split_bytes

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
        i = bisect_left(free, wanted << _ADDRESS_BITS)
        if i < len(free):
            block = self._free_block[free[i]]
            if block.is_split:
                return False
            self._release_segment(block)
            return True
        released = 0
        for block in reversed([self._free_block[key] for key in free]):
            if released >= wanted or block.size < self.max_split:
                break
            if not block.is_split:
                released += block.size
                self._release_segment(block)
        return released >= wanted

    def _release_cached(self) -> None:
        for small in (False, True):
            for block in [self._free_block[key] for key in self._free[small]]:
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
        current, peak, allocated, at_reset = self._current, self._peak, self._allocated, self._current_at_reset
        stats: dict[str, int] = {}
        for name in STAT_NAMES:
            base = _BASE[name]
            small, large = base, base + 1
            values = {
                "current": (current[small] + current[large], current[small], current[large]),
                "peak": (self._peak_all[base], peak[small], peak[large]),
                "allocated": (allocated[small] + allocated[large], allocated[small], allocated[large]),
            }
            freed = [allocated[i] - current[i] + at_reset[i] for i in (small, large)]
            values["freed"] = (freed[0] + freed[1], freed[0], freed[1])
            for offset, pool in enumerate(("all", *POOLS)):
                for kind in ("current", "peak", "allocated", "freed"):
                    stats[f"{name}.{pool}.{kind}"] = values[kind][offset]
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
        base = _BASE[name]
        return self._current[base] + self._current[base + 1]

    def peak(self, name: str) -> int:
        return self._peak_all[_BASE[name]]

    def reset_peak(self) -> None:
        current = self._current
        self._peak[:] = current
        for base in _BASE.values():
            self._peak_all[base] = current[base] + current[base + 1]

    def reset_accumulated(self) -> None:
        self._allocated[:] = [0] * len(self._allocated)
        self._current_at_reset[:] = self._current
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
