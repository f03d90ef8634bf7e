import time
from collections import defaultdict

import torch
import torch.distributed as dist


class SmoothedValue:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.count += n
        self.total += value * n

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


class MetricLogger:
    def __init__(self, delimiter="\t"):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.meters[k].update(v)

    def synchronize_between_processes(self):
        pass

    def log_every(self, iterable, print_freq, header=None, logger=None):
        start = time.time()
        for i, obj in enumerate(iterable):
            yield obj
            if i % print_freq == 0:
                print(header, i, '{:.1f}s'.format(time.time() - start))

    def __str__(self):
        return self.delimiter.join('{}: {:.4f}'.format(k, m.global_avg) for k, m in self.meters.items())


def is_main_process():
    return not dist.is_available() or not dist.is_initialized() or dist.get_rank() == 0


def reduce_dict(input_dict, average=True):
    if not dist.is_available() or not dist.is_initialized():
        return input_dict
    with torch.no_grad():
        names = sorted(input_dict.keys())
        values = torch.stack([input_dict[k] for k in names])
        dist.all_reduce(values)
        if average:
            values /= dist.get_world_size()
        return dict(zip(names, values))


def collate_fn(batch):
    images, targets = zip(*batch)
    return torch.stack(images), targets
