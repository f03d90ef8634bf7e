import torch
from torch.optim.lr_scheduler import _LRScheduler
from tqdm import tqdm


class WarmupScheduler(_LRScheduler):
    """Noam-style warm-up: lr grows linearly for warmup_steps, then decays with 1/sqrt(step)."""

    def __init__(self, optimizer, warmup_steps=4000, last_epoch=-1):
        self.warmup_steps = warmup_steps
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        step_num = self.last_epoch + 1
        return [base_lr * self.warmup_steps ** 0.5 * min(step_num * self.warmup_steps ** -1.5, step_num ** -0.5)
                for base_lr in self.base_lrs]


def train_loop(net, train_loader, device, steps=300000, lr=0.0001, warmup_steps=4000, grad_clip=1.0):
    net = net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    scheduler = WarmupScheduler(optimizer, warmup_steps=warmup_steps)
    step_counter = 0
    while step_counter < steps:
        net.train()
        for batch in tqdm(train_loader):
            text, text_lens, spec, spec_lens = [t.to(device) for t in batch]
            train_loss = net(text, text_lens, spec, spec_lens)
            optimizer.zero_grad()
            train_loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), grad_clip, error_if_nonfinite=False)
            optimizer.step()
            scheduler.step()
            step_counter += 1
