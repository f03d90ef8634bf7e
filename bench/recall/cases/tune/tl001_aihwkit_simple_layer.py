# aihwkit example 01: a single analog layer trained with analog-aware SGD.
from torch import Tensor
from torch.nn.functional import mse_loss

from aihwkit.nn import AnalogLinear
from aihwkit.optim import AnalogSGD
from aihwkit.simulator.configs import SingleRPUConfig, ConstantStepDevice
from aihwkit.simulator.rpu_base import cuda

x = Tensor([[0.1, 0.2, 0.4, 0.3], [0.2, 0.1, 0.1, 0.3]])
y = Tensor([[1.0, 0.5], [0.7, 0.3]])

model = AnalogLinear(4, 2, bias=True, rpu_config=SingleRPUConfig(device=ConstantStepDevice()))

if cuda.is_compiled():
    x = x.cuda()
    y = y.cuda()
    model.cuda()

opt = AnalogSGD(model.parameters(), lr=0.1)
opt.regroup_param_groups(model)

for epoch in range(100):
    pred = model(x)
    loss = mse_loss(pred, y)
    loss.backward()

    opt.step()
    print("Loss error: {:.16f}".format(loss))
