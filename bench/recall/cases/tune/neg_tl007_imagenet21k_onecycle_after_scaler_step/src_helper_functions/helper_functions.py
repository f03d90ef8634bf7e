import torch
import torch.distributed as dist


class AverageMeter(object):
    def __init__(self):
        self.val = None
        self.sum = None
        self.cnt = None
        self.avg = None
        self.ema = None
        self.initialized = False

    def update(self, val, n=1):
        if not self.initialized:
            self.val, self.sum, self.cnt, self.avg, self.ema = val, val * n, n, val, val
            self.initialized = True
        else:
            self.val = val
            self.sum += val * n
            self.cnt += n
            self.avg = self.sum / self.cnt
            self.ema = self.ema * 0.99 + self.val * 0.01


def num_distrib():
    return dist.get_world_size() if dist.is_initialized() else 1


def reduce_tensor(tensor, n):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= n
    return rt


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0) * 100. / batch_size for k in topk]
