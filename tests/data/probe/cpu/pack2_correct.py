"""Correct training patterns near the pack-2 bugs, one section per pattern, each with its
own model and optimizer. Nothing here is a bug: the probe must stay silent, and static
findings put on the tagged lines must come out not-reproduced."""
import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def gan():
    """The generator's backward flows into the discriminator's gradients; the
    discriminator clears them after that backward pass and before its own."""
    generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
    discriminator = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    bce = nn.BCEWithLogitsLoss()
    for _ in range(6):
        fake = generator(torch.randn(16, 4))
        opt_g.zero_grad()
        bce(discriminator(fake), torch.ones(16, 1)).backward()
        opt_d.zero_grad()  # line: gan-clear
        opt_g.step()
        loss_d = bce(discriminator(torch.randn(16, 8)), torch.ones(16, 1)) + bce(discriminator(fake.detach()), torch.zeros(16, 1))
        loss_d.backward()
        opt_d.step()


def scaler_with_schedule():
    """A GradScaler whose first steps skip the update (inf gradients from a huge initial
    scale), unscaling before clipping, and a per-iteration schedule after the step."""
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 / (1 + step))
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**120)
    for _ in range(6):
        optimizer.zero_grad()
        loss = model(torch.randn(16, 8)).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # line: unscaled-clip
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()  # line: schedule-after-step


def per_epoch_schedule():
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    for epoch in range(3):
        for _ in range(2):
            optimizer.zero_grad()
            model(torch.randn(4, 8)).pow(2).mean().backward()
            optimizer.step()
        scheduler.step()  # line: epoch-schedule


def frozen_batchnorm_each_epoch():
    """Batch-norm deliberately frozen in every epoch: the network trains in train mode
    with its batch-norm layer in eval mode from the first step on; evaluation switches
    the whole model to eval and back."""
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):  # line: frozen-bn-epochs
        model.train()
        model[1].eval()
        for _ in range(2):
            optimizer.zero_grad()
            model(torch.randn(16, 8)).pow(2).mean().backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():  # line: proper-eval
            model(torch.randn(16, 8))
        model.train()


def eval_mode_without_mode_layers():
    """Never switched back to train mode, but nothing in it depends on the mode."""
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):  # line: no-mode-layers
        for _ in range(2):
            optimizer.zero_grad()
            model(torch.randn(16, 8)).pow(2).mean().backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            model(torch.randn(16, 8))


def samplers():
    """The training sampler is told the epoch; the evaluation sampler does not shuffle.
    The evaluation leaves the model in train mode, which changes nothing for a `Linear`."""
    data = TensorDataset(torch.randn(32, 8), torch.randn(32, 1))
    train_sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True)
    val_sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=False)
    train_loader = DataLoader(data, batch_size=8, sampler=train_sampler)
    val_loader = DataLoader(data, batch_size=8, sampler=val_sampler)
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):  # line: sampler-epochs
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
        with torch.no_grad():  # line: linear-eval
            for x, _ in val_loader:
                model(x)


def fp16_with_healthy_gradients():
    """float16 autocast without a scaler, on a loss whose gradients stay in range."""
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):  # line: healthy-fp16
            loss = nn.functional.cross_entropy(model(torch.randn(64, 32)), torch.randint(0, 4, (64,)))
        loss.backward()
        optimizer.step()


def accumulation_with_clipping():
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for i in range(8):
        (model(torch.randn(4, 8)).pow(2).mean() / 4).backward()
        if (i + 1) % 4 == 0:
            torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)  # line: accumulated-clip
            optimizer.step()
            optimizer.zero_grad()


def gradient_norm_logged_after_the_step():
    """`clip_grad_norm_` with an infinite limit only measures the norm, for logging."""
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(4, 8)).pow(2).mean().backward()
        optimizer.step()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))  # line: logged-norm
        print(f"gradient norm {norm:.3f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    gan()
    scaler_with_schedule()
    per_epoch_schedule()
    frozen_batchnorm_each_epoch()
    eval_mode_without_mode_layers()
    samplers()
    fp16_with_healthy_gradients()
    accumulation_with_clipping()
    gradient_norm_logged_after_the_step()
