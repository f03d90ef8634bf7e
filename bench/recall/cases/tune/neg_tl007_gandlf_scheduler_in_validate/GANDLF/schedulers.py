import math

from torch.optim.lr_scheduler import CyclicLR, ExponentialLR, LambdaLR, ReduceLROnPlateau, StepLR


def cyclic_lr_base(parameters, mode="triangular"):
    return CyclicLR(parameters["optimizer_object"], base_lr=parameters["learning_rate"] * 0.001,
                    max_lr=parameters["learning_rate"], step_size_up=parameters["scheduler"]["step_size"],
                    mode=mode, cycle_momentum=False)


def global_schedulers_dict(parameters):
    scheduler_type = parameters["scheduler"]["type"]
    if scheduler_type == "triangle":
        step_size = parameters["scheduler"]["step_size"]
        clr = lambda it: 1 - abs(it / step_size - 2 * math.floor(1 + it / (2 * step_size)) + 1)
        return LambdaLR(parameters["optimizer_object"], [clr])
    if scheduler_type == "exp":
        return ExponentialLR(parameters["optimizer_object"], parameters["scheduler"]["gamma"])
    if scheduler_type == "step":
        return StepLR(parameters["optimizer_object"], parameters["scheduler"]["step_size"], gamma=0.1)
    if scheduler_type in ["reduce_on_plateau", "reduce-on-plateau", "plateau", "reduceonplateau"]:
        return ReduceLROnPlateau(parameters["optimizer_object"], mode="min", factor=0.1, patience=5)
    if scheduler_type == "triangular":
        return cyclic_lr_base(parameters, mode="triangular")
    raise ValueError(f"Scheduler {scheduler_type} not supported")
