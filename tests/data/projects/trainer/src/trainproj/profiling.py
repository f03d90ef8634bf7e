import torch


def settle():
    """Wait until the GPU has run everything queued so far."""
    torch.cuda.synchronize()


def report(seconds):
    print(f"{seconds * 1e3:.1f} ms")
