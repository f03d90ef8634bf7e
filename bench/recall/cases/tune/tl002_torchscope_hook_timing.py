import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torchvision.models as models


class ModelSummary:
    def __init__(self, model, input_size, batch_size=-1, device="cuda"):
        self.model = model
        self.input_size = input_size
        self.batch_size = batch_size
        self.device = device
        self.summary = OrderedDict()
        self.hooks = []

    def register_hook(self, module):
        def pre_hook(module, input):
            module.__start_time__ = time.time()

        def hook(module, input, output):
            class_name = str(module.__class__).split(".")[-1].split("'")[0]
            module_idx = len(self.summary)
            m_key = "%s-%i" % (class_name, module_idx + 1)
            self.summary[m_key] = OrderedDict()
            self.summary[m_key]["input_shape"] = list(input[0].size())
            if isinstance(output, (list, tuple)):
                self.summary[m_key]["output_shape"] = [[-1] + list(o.size())[1:] for o in output]
            else:
                self.summary[m_key]["output_shape"] = list(output.size())
            params = 0
            for p in module.parameters(recurse=False):
                params += torch.prod(torch.LongTensor(list(p.size())))
            self.summary[m_key]["nb_params"] = params
            self.summary[m_key]["duration"] = time.time() - module.__start_time__

        if not isinstance(module, nn.Sequential) and not isinstance(module, nn.ModuleList) and not (module == self.model):
            self.hooks.append(module.register_forward_pre_hook(pre_hook))
            self.hooks.append(module.register_forward_hook(hook))

    def run(self):
        if self.device == "cuda" and torch.cuda.is_available():
            dtype = torch.cuda.FloatTensor
        else:
            dtype = torch.FloatTensor
        x = torch.rand(2, *self.input_size).type(dtype)
        self.model.apply(self.register_hook)
        start = time.time()
        self.model(x)
        total = time.time() - start
        for h in self.hooks:
            h.remove()
        return total

    def show(self, total):
        print("-" * 80)
        print("{:>20}  {:>25} {:>15} {:>12}".format("Layer (type)", "Output Shape", "Param #", "Time (ms)"))
        print("=" * 80)
        total_params = 0
        for layer, info in self.summary.items():
            print("{:>20}  {:>25} {:>15} {:>12.3f}".format(
                layer, str(info["output_shape"]), "{0:,}".format(info["nb_params"]), info["duration"] * 1000))
            total_params += info["nb_params"]
        print("=" * 80)
        print("Total params: {0:,}".format(total_params))
        print("Forward time: %.3f ms" % (total * 1000))
        print("-" * 80)


def scope(model, input_size, batch_size=-1, device="cuda"):
    summary = ModelSummary(model, input_size, batch_size, device)
    total = summary.run()
    summary.show(total)


if __name__ == "__main__":
    net = models.resnet18().cuda()
    scope(net, input_size=(3, 224, 224))
