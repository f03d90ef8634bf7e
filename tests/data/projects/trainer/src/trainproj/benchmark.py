import time

import torch

from .models import Plain
from .profiling import report, settle


def forward_time(x):
    model = Plain().cuda()
    x = x.cuda()
    start = time.perf_counter()
    model(x)
    settle()
    elapsed = time.perf_counter() - start
    report(elapsed)
    return elapsed
