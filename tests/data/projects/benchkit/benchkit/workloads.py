import torch


def run_model(model, images):
    return model(images)


def run_model_synced(model, images):
    out = model(images)
    torch.cuda.synchronize()
    return out


def read_labels(path):
    with open(path) as f:
        return f.read().split()
