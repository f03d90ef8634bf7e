"""A `register_torch_dispatch` rule for a tensor subclass of the script's own still
runs under simulated CUDA (the simulator answers torch's rule lookup itself only for
its own tensors), and simulated tensors still dispatch. Prints JSON."""

import json

import torch


class Tagged(torch.Tensor):
    @staticmethod
    def __new__(cls, elem):
        tagged = torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)
        tagged.elem = elem
        return tagged

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda t: t.elem if isinstance(t, Tagged) else t  # noqa: E731
        return func(*map(unwrap, args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})


seen = []


@torch.library.register_torch_dispatch("aten::add.Tensor", Tagged)
def add_rule(mode, func, types, args, kwargs):
    seen.append(str(func))
    return Tagged(args[0].elem + args[1].elem)


tagged = Tagged(torch.ones(3))
total = tagged + tagged
product = tagged * 3
x = torch.ones(3, device="cuda")
y = x + x
print(json.dumps({"rule_ran": seen, "rule_result": total.elem.tolist(), "other_op": type(product).__name__, "simulated_add": [str(y.device), y.tolist()]}))
