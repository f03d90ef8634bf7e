import argparse
import random

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.cuda.amp import GradScaler, autocast
from torch.utils.data import DataLoader
from tqdm import tqdm

from checkpoint import save_checkpoint
from dataset import dataset_loader
from flags import Flags
from networks.SATRN import SATRN
from utils import get_network, get_optimizer


def run_epoch(data_loader, model, epoch_text, criterion, optimizer, lr_scheduler,
              teacher_forcing_ratio, max_grad_norm, device, scaler, train=True):
    # Disables autograd during validation mode
    torch.set_grad_enabled(train)
    if train:
        model.train()
    else:
        model.eval()

    losses = []
    total_inputs = 0
    correct_symbols = 0
    total_symbols = 0

    with tqdm(desc=f"{epoch_text} ({'Train' if train else 'Validation'})",
              total=len(data_loader.dataset), dynamic_ncols=True, leave=False) as pbar:
        for d in data_loader:
            input = d["image"].to(device).float()
            curr_batch_size = len(input)
            expected = d["truth"]["encoded"].to(device)
            expected[expected == -1] = data_loader.dataset.token_to_id["<PAD>"]

            with autocast():
                output = model(input, expected, train, teacher_forcing_ratio)
                decoded_values = output.transpose(1, 2)
                _, sequence = torch.topk(decoded_values, 1, dim=1)
                sequence = sequence.squeeze(1)
                loss = criterion(decoded_values, expected[:, 1:])

            if train:
                optimizer.zero_grad()
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
                lr_scheduler.step()

            losses.append(loss.item())
            expected[expected == data_loader.dataset.token_to_id["<PAD>"]] = -1
            correct_symbols += torch.sum(sequence == expected[:, 1:], dim=(0, 1)).item()
            total_symbols += torch.sum(expected[:, 1:] != -1, dim=(0, 1)).item()
            total_inputs += curr_batch_size
            pbar.update(curr_batch_size)

    return {
        "loss": np.mean(losses),
        "correct_symbols": correct_symbols,
        "total_symbols": total_symbols,
    }


def main(config_file):
    options = Flags(config_file).get()
    torch.manual_seed(options.seed)
    np.random.seed(options.seed)
    random.seed(options.seed)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_data_loader, validation_data_loader, train_dataset, valid_dataset = dataset_loader(options)

    model = get_network(options.network, options, None, device, train_dataset)
    model.train()
    criterion = model.criterion.to(device)
    enc_params_to_optimise = [p for p in model.encoder.parameters() if p.requires_grad]
    dec_params_to_optimise = [p for p in model.decoder.parameters() if p.requires_grad]
    params_to_optimise = [*enc_params_to_optimise, *dec_params_to_optimise]
    optimizer = get_optimizer(options.optimizer.optimizer, params_to_optimise,
                              lr=options.optimizer.lr, weight_decay=options.optimizer.weight_decay)
    lr_scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=options.optimizer.lr_epochs, gamma=0.5)
    scaler = GradScaler()

    for epoch in range(options.num_epochs):
        epoch_text = f"[{epoch + 1}/{options.num_epochs}]"
        train_result = run_epoch(train_data_loader, model, epoch_text, criterion, optimizer,
                                 lr_scheduler, options.teacher_forcing_ratio, options.max_grad_norm,
                                 device, scaler, train=True)
        validation_result = run_epoch(validation_data_loader, model, epoch_text, criterion,
                                      optimizer, lr_scheduler, options.teacher_forcing_ratio,
                                      options.max_grad_norm, device, scaler, train=False)
        print(epoch_text, train_result["loss"], validation_result["loss"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config_file", default="configs/SATRN.yaml")
    main(parser.parse_args().config_file)
