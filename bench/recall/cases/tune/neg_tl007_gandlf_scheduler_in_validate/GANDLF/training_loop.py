import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader

from GANDLF.compute import get_loss_and_metrics
from GANDLF.models import global_models_dict
from GANDLF.optimizers import global_optimizer_dict
from GANDLF.schedulers import global_schedulers_dict


def train_network(model, train_dataloader, optimizer, params):
    """Function to train a network for a single epoch"""
    print("*" * 20)
    print("Starting Training : ")
    print("*" * 20)
    total_epoch_train_loss = 0
    total_epoch_train_metric = {metric: 0 for metric in params["metrics"]}
    model.train()
    for batch_idx, subject in enumerate(train_dataloader):
        optimizer.zero_grad()
        image = torch.cat([subject[key]["data"] for key in params["channel_keys"]], dim=1).float().to(params["device"])
        label = subject["label"]["data"].to(params["device"])
        output = model(image)
        loss, calculated_metrics = get_loss_and_metrics(image, label, output, params)
        loss.backward()
        optimizer.step()

        total_epoch_train_loss += loss.cpu().data.item()
        for metric in calculated_metrics.keys():
            total_epoch_train_metric[metric] += calculated_metrics[metric]

    average_epoch_train_loss = total_epoch_train_loss / len(train_dataloader)
    average_epoch_train_metric = {k: v / len(train_dataloader) for k, v in total_epoch_train_metric.items()}
    return average_epoch_train_loss, average_epoch_train_metric


def validate_network(model, valid_dataloader, scheduler, params, epoch=0, mode="validation"):
    """Function to validate a network for a single epoch; steps the scheduler at the end of validation."""
    total_epoch_valid_loss = 0
    total_epoch_valid_metric = {metric: 0 for metric in params["metrics"]}
    model.eval()
    with torch.no_grad():
        for batch_idx, subject in enumerate(valid_dataloader):
            image = torch.cat([subject[key]["data"] for key in params["channel_keys"]], dim=1).float().to(params["device"])
            label = subject["label"]["data"].to(params["device"])
            output = model(image)
            final_loss, final_metric = get_loss_and_metrics(image, label, output, params)
            total_epoch_valid_loss += final_loss.cpu().item()
            for metric in final_metric.keys():
                total_epoch_valid_metric[metric] += final_metric[metric]

    average_epoch_valid_loss = total_epoch_valid_loss / len(valid_dataloader)
    average_epoch_valid_metric = {k: v / len(valid_dataloader) for k, v in total_epoch_valid_metric.items()}
    if scheduler is not None and mode == "validation":
        if params["scheduler"]["type"] in ["reduce_on_plateau", "reduce-on-plateau", "plateau", "reduceonplateau"]:
            scheduler.step(average_epoch_valid_loss)
        else:
            scheduler.step()
    return average_epoch_valid_loss, average_epoch_valid_metric


def training_loop(training_data, validation_data, output_dir, device, params):
    params["device"] = device
    model = global_models_dict[params["model"]["architecture"]](parameters=params).to(device)
    params["model_parameters"] = model.parameters()
    optimizer = global_optimizer_dict[params["optimizer"]["type"]](params)
    params["optimizer_object"] = optimizer
    scheduler = global_schedulers_dict(params)

    train_dataloader = DataLoader(training_data, batch_size=params["batch_size"], shuffle=True,
                                  pin_memory=False, num_workers=params["q_num_workers"])
    val_dataloader = DataLoader(validation_data, batch_size=1, pin_memory=False, num_workers=params["q_num_workers"])

    best_loss = 1e7
    for epoch in range(params["num_epochs"]):
        epoch_start_time = time.time()
        epoch_train_loss, epoch_train_metric = train_network(model, train_dataloader, optimizer, params)
        epoch_valid_loss, epoch_valid_metric = validate_network(model, val_dataloader, scheduler, params, epoch,
                                                                mode="validation")
        if epoch_valid_loss <= best_loss:
            best_loss = epoch_valid_loss
            torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
                        "optimizer_state_dict": optimizer.state_dict(), "loss": best_loss},
                       os.path.join(output_dir, params["model"]["architecture"] + "_best.pth.tar"))
        print("Time taken for epoch: ", (time.time() - epoch_start_time) / 60, " mins", flush=True)
