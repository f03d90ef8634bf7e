import torch


def pin_process_gpu(rank):
    torch.cuda.set_device(rank)
