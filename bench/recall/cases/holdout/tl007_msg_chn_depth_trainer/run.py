import torch
import torch.nn as nn
from torch.optim import lr_scheduler

from trainers.DepthTrainer import KittiDepthTrainer


class MsgChn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 3, 3, padding=1)

    def forward(self, d, rgb):
        out = self.conv(torch.cat([d, rgb], 1))
        return out[:, 0:1], out[:, 1:2], out[:, 2:3]


if __name__ == '__main__':
    params = {'use_gpu': torch.cuda.is_available(), 'save_chkpt_each': 5, 'gpu_id': 0, 'num_epochs': 20}
    net = MsgChn()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    dataloaders = {'train': [], 'val': []}
    trainer = KittiDepthTrainer(net, params, optimizer, nn.L1Loss(), scheduler, dataloaders,
                                {'train': 0, 'val': 0}, './workspace')
    trainer.train(params['num_epochs'])
    trainer.evaluate()
