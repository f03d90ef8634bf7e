import torch

from models.base import Runner


class Classifier(Runner):
    def __init__(self, config):
        super().__init__(config)
        self.net = torch.nn.Linear(config.width, config.classes)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=config.lr)
        self.schedules.append(torch.optim.lr_scheduler.ExponentialLR(self.opt, 0.9))

    def learn(self, features, labels):
        self.opt.zero_grad()
        torch.nn.functional.cross_entropy(self.net(features), labels).backward()
        self.opt.step()
