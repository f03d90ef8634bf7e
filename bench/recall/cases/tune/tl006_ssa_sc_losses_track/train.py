import argparse

import torch
import torch.optim as optim

from common.dataset import get_dataset
from common.metrics import Metrics
from networks.SSA_SC import SSA_SC


def train(model, optimizer, scheduler, dataset, _cfg, start_epoch, logger, tbwriter):
    device = torch.device("cuda")
    dtype = torch.float32
    model = model.to(device=device)
    nbr_epochs = _cfg["TRAIN"]["EPOCHS"]
    dset = dataset["train"]
    nbr_iterations = len(dset)
    metrics = Metrics(dset.dataset.nbr_classes, nbr_iterations, model.get_scales())
    metrics.reset_evaluator()
    metrics.losses_track.set_validation_losses(model.get_validation_loss_keys())
    metrics.losses_track.set_train_losses(model.get_train_loss_keys())

    for epoch in range(start_epoch, nbr_epochs + 1):
        model.train()
        for t, (data, indices) in enumerate(dataset["train"]):
            for key in data:
                data[key] = data[key].to(device=device, dtype=dtype)
            scores = model(data)
            loss = model.compute_loss(scores, data)

            optimizer.zero_grad()
            loss["total"].backward()
            optimizer.step()

            metrics.add_batch(prediction=scores, target=model.get_target(data))
            metrics.losses_track.update_train_losses(loss)
            if t % _cfg["TRAIN"]["SUMMARY_PERIOD"] == 0:
                loss_print = "=> Epoch [{}/{}], Iteration [{}/{}], Train Losses: ".format(epoch, nbr_epochs, t, nbr_iterations)
                for key in loss.keys():
                    loss_print += "{} = {:.6f},  ".format(key, loss[key])
                logger.info(loss_print[:-3])

        scheduler.step()
        for l_key in metrics.losses_track.train_losses:
            tbwriter.add_scalar("train_loss_epoch/{}".format(l_key),
                                metrics.losses_track.train_losses[l_key] / metrics.losses_track.train_iteration_counts,
                                epoch - 1)
        metrics.losses_track.restart_train_losses()
        metrics.reset_evaluator()

        model.eval()
        with torch.no_grad():
            for t, (data, indices) in enumerate(dataset["val"]):
                for key in data:
                    data[key] = data[key].to(device=device, dtype=dtype)
                scores = model(data)
                loss = model.compute_loss(scores, data)
                metrics.add_batch(prediction=scores, target=model.get_target(data))
                metrics.losses_track.update_validaiton_losses(loss)
        metrics.losses_track.restart_validation_losses()
        metrics.reset_evaluator()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", default="SSC_configs/examples/SSA_SC.yaml")
    args = parser.parse_args()
    _cfg = {"TRAIN": {"EPOCHS": 80, "SUMMARY_PERIOD": 50}, "OPTIMIZER": {"BASE_LR": 0.001}}
    dataset = get_dataset(args.cfg)
    model = SSA_SC(class_num=20, class_frequencies=dataset["class_freqs"])
    optimizer = optim.Adam(model.parameters(), lr=_cfg["OPTIMIZER"]["BASE_LR"], betas=(0.9, 0.999))
    scheduler = optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.98 ** epoch)
    train(model, optimizer, scheduler, dataset, _cfg, 1, None, None)


if __name__ == "__main__":
    main()
