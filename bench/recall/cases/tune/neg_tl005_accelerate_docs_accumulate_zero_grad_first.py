import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

from model import RegressionModel


def main():
    accelerator = Accelerator(gradient_accumulation_steps=2)

    x = torch.randn(1024, 16)
    y = x @ torch.randn(16, 1) + 0.1 * torch.randn(1024, 1)
    dataloader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    model = RegressionModel(16, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=100)
    loss_function = F.mse_loss

    dataloader, model, optimizer, scheduler = accelerator.prepare(dataloader, model, optimizer, scheduler)

    for epoch in range(3):
        for batch in dataloader:
            with accelerator.accumulate(model):
                optimizer.zero_grad()
                inputs, targets = batch
                outputs = model(inputs)
                loss = loss_function(outputs, targets)
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
        accelerator.print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
