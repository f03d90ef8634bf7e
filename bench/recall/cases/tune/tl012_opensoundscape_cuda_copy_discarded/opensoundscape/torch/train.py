from pathlib import Path

import pandas as pd
import torch
from torch.utils.data import DataLoader


def train(save_dir, model, train_dataset, valid_dataset, optimizer, loss_fn,
          epochs=25, batch_size=1, num_workers=0, log_every=5, print_logging=True,
          save_every=1):
    """Train a model

    Input:
        save_dir:       A directory to save intermediate results
        model:          A binary torch model,
                        - e.g. torchvision.models.resnet18(pretrained=True)
                        - must override classes, e.g. model.fc = torch.nn.Linear(model.fc.in_features, 2)
        train_dataset:  The training Dataset, e.g. created by SingleTargetAudioDataset()
        valid_dataset:  The validation Dataset, e.g. created by SingleTargetAudioDataset()
        optimizer:      A torch optimizer, e.g. torch.optim.SGD(model.parameters(), lr=1e-3)
        loss_fn:        A torch loss function, e.g. torch.nn.CrossEntropyLoss()
    """
    save_dir = Path(save_dir)
    save_dir.mkdir(exist_ok=True, parents=True)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model.to(device)

    train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True,
                              num_workers=num_workers)
    valid_loader = DataLoader(valid_dataset, batch_size=batch_size, shuffle=False,
                              num_workers=num_workers)

    stats = []
    for epoch in range(epochs):
        model.train()
        train_loss = 0.0
        train_correct = 0
        train_total = 0
        for t in train_loader:
            X, y = t["X"], t["y"]
            X.cuda()
            y.cuda()
            targets = y.squeeze(1)

            # forward + backward + optimize
            optimizer.zero_grad()
            outputs = model(X)
            loss = loss_fn(outputs, targets)
            loss.backward()
            optimizer.step()

            train_loss += loss.item()
            _, predicted = torch.max(outputs.data, 1)
            train_total += targets.size(0)
            train_correct += (predicted == targets).sum().item()

        model.eval()
        valid_correct = 0
        valid_total = 0
        with torch.no_grad():
            for t in valid_loader:
                X, y = t["X"], t["y"]
                X.cuda()
                y.cuda()
                targets = y.squeeze(1)
                outputs = model(X)
                _, predicted = torch.max(outputs.data, 1)
                valid_total += targets.size(0)
                valid_correct += (predicted == targets).sum().item()

        stats.append({"epoch": epoch, "train_loss": train_loss / len(train_loader),
                      "train_accuracy": train_correct / train_total,
                      "valid_accuracy": valid_correct / valid_total})
        if print_logging and epoch % log_every == 0:
            print(stats[-1])
        if epoch % save_every == 0:
            torch.save({"model_state_dict": model.state_dict(),
                        "optimizer_state_dict": optimizer.state_dict()},
                       save_dir.joinpath(f"epoch-{epoch}.tar"))
    return pd.DataFrame(stats)
