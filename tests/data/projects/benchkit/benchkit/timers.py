import time
from contextlib import contextmanager

import torch


def timeit(fn, *args, repeat=20):
    fn(*args)
    start = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    return (time.perf_counter() - start) / repeat


def timeit_synced(fn, *args, repeat=20):
    fn(*args)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeat


@contextmanager
def record_time(tag):
    start = time.time()
    yield
    print(tag, time.time() - start)


@contextmanager
def record_time_synced(tag):
    start = time.time()
    yield
    torch.cuda.synchronize()
    print(tag, time.time() - start)
