import torch


class ExponentialMovingAverage:
    def __init__(self, model, decay):
        self.model = model
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def apply_shadow(self):
        self.model.load_state_dict(self.shadow)


def create_optimizer(model, optim_cfg):
    return torch.optim.SGD(model.parameters(), lr=optim_cfg.args.lr, momentum=optim_cfg.args.momentum)


def create_scheduler(optimizer, schedule_cfg):
    return torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1, end_factor=0.01, total_iters=schedule_cfg.epochs)
