import torch


def prepare_inputs(data, device):
    if isinstance(data, dict):
        return type(data)({key: prepare_inputs(value, device) for key, value in data.items()})
    if isinstance(data, (list, tuple)):
        return type(data)(prepare_inputs(value, device) for value in data)
    if isinstance(data, torch.Tensor):
        return data.to(device)
    return data


def unpack_dict(d, keys, return_type=tuple):
    if return_type in (tuple, list):
        return return_type(d[key] for key in keys)
    return {key: d[key] for key in keys}


def merge_dict(dicts, merge_fn=torch.cat):
    if len(dicts) == 0:
        return dict()
    return {key: merge_fn([d[key] for d in dicts]) for key in dicts[0].keys()}


def flatten_dict(nested, sep=".", postprocess_fn=lambda x: x):
    def _flatten(d, prefix=""):
        out = {}
        for key, value in d.items():
            name = prefix + sep + key if prefix else key
            out.update(_flatten(value, name) if isinstance(value, dict) else {name: postprocess_fn(value)})
        return out

    return _flatten(nested)


class InfiniteLoader(object):
    def __init__(self, loader):
        self.loader = loader
        self.iterator = iter(loader)

    def __next__(self):
        try:
            return next(self.iterator)
        except StopIteration:
            self.iterator = iter(self.loader)
            return next(self.iterator)
