import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from sklearn.metrics import accuracy_score
from tqdm.autonotebook import tqdm


def moveTo(obj, device):
    if isinstance(obj, list):
        return [moveTo(x, device) for x in obj]
    elif isinstance(obj, tuple):
        return tuple(moveTo(list(obj), device))
    elif isinstance(obj, dict):
        return {moveTo(k, device): moveTo(v, device) for k, v in obj.items()}
    elif hasattr(obj, "to"):
        return obj.to(device)
    return obj


def run_epoch(model, optimizer, data_loader, loss_func, device, results, score_funcs, prefix="", desc=None):
    running_loss = []
    y_true = []
    y_pred = []
    start = time.time()
    for inputs, labels in tqdm(data_loader, desc=desc, leave=False):
        inputs = moveTo(inputs, device)
        labels = moveTo(labels, device)

        y_hat = model(inputs)
        loss = loss_func(y_hat, labels)

        if model.training:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

        running_loss.append(loss.item())

        if len(score_funcs) > 0 and isinstance(labels, torch.Tensor):
            labels = labels.detach().cpu().numpy()
            y_hat = y_hat.detach().cpu().numpy()
            y_true.extend(labels.tolist())
            y_pred.extend(y_hat.tolist())
    end = time.time()

    y_pred = np.asarray(y_pred)
    if len(y_pred.shape) == 2 and y_pred.shape[1] > 1:
        y_pred = np.argmax(y_pred, axis=1)
    results[prefix + " loss"].append(np.mean(running_loss))
    for name, score_func in score_funcs.items():
        try:
            results[prefix + " " + name].append(score_func(y_true, y_pred))
        except Exception:
            results[prefix + " " + name].append(float("NaN"))
    return end - start


def train_simple_network(model, loss_func, train_loader, test_loader=None, score_funcs=None,
                         epochs=50, device="cpu", checkpoint_file=None):
    to_track = ["epoch", "total time", "train loss"]
    if test_loader is not None:
        to_track.append("test loss")
    for eval_score in score_funcs:
        to_track.append("train " + eval_score)
        if test_loader is not None:
            to_track.append("test " + eval_score)

    total_train_time = 0
    results = {}
    for item in to_track:
        results[item] = []

    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    model.to(device)

    for epoch in tqdm(range(epochs), desc="Epoch"):
        model = model.train()
        total_train_time += run_epoch(model, optimizer, train_loader, loss_func, device, results, score_funcs,
                                      prefix="train", desc="Training")
        results["total time"].append(total_train_time)
        results["epoch"].append(epoch)

        if test_loader is not None:
            model = model.eval()
            with torch.no_grad():
                run_epoch(model, optimizer, test_loader, loss_func, device, results, score_funcs,
                          prefix="test", desc="Testing")

    if checkpoint_file is not None:
        torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
                    "optimizer_state_dict": optimizer.state_dict(), "results": results}, checkpoint_file)
    return pd.DataFrame.from_dict(results)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    mnist_train = datasets.MNIST("./data", train=True, transform=transforms.ToTensor(), download=True)
    mnist_test = datasets.MNIST("./data", train=False, transform=transforms.ToTensor(), download=True)
    train_loader = DataLoader(mnist_train, batch_size=64, shuffle=True)
    test_loader = DataLoader(mnist_test, batch_size=64)

    model = nn.Sequential(
        nn.Flatten(),
        nn.Linear(784, 256),
        nn.Tanh(),
        nn.Dropout(0.2),
        nn.Linear(256, 10),
    )
    results = train_simple_network(model, nn.CrossEntropyLoss(), train_loader, test_loader=test_loader,
                                   score_funcs={"Accuracy": accuracy_score}, device=device, epochs=10)
    print(results.tail())
