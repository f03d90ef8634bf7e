# LION example_scripts/FBPConvnet_train.py (trimmed): post-processing CNN for low-dose CT.
import pathlib

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

from LION.CTtools.ct_utils import make_operator
from LION.experiments.ct_experiments import LowDoseCTRecon
from LION.models.post_processing.FBPConvNet import FBPConvNet
from LION.utils.parameter import LIONParameter

device = torch.device("cuda:0")
torch.cuda.set_device(device)

savefolder = pathlib.Path("/store/DAMTP/ab2860/trained_models/test_debbuging/")
final_result_fname = savefolder.joinpath("FBPConvNet_final_iter.pt")

experiment = LowDoseCTRecon()
lidc_dataset = experiment.get_training_dataset()
lidc_dataset_val = experiment.get_validation_dataset()

batch_size = 4
lidc_dataloader = DataLoader(lidc_dataset, batch_size, shuffle=True)
lidc_validation = DataLoader(lidc_dataset_val, batch_size, shuffle=False)

model = FBPConvNet(geometry_parameters=experiment.geo).to(device)

train_param = LIONParameter()
train_param.optimiser = "adam"
train_param.epochs = 100
train_param.learning_rate = 1e-3
train_param.betas = (0.9, 0.99)
train_param.loss = "MSELoss"
optimiser = torch.optim.Adam(model.parameters(), lr=train_param.learning_rate, betas=train_param.betas)
loss_fcn = torch.nn.MSELoss()

train_loss = torch.zeros(train_param.epochs)
validation_loss = torch.zeros(train_param.epochs)
best_loss = float("inf")

for epoch in range(train_param.epochs):
    model.train()
    for index, (data, target) in enumerate(tqdm(lidc_dataloader)):
        optimiser.zero_grad()
        reconstruction = model(data.to(device))
        loss = loss_fcn(reconstruction, target.to(device))
        loss.backward()
        train_loss[epoch] += loss.item()
        optimiser.step()

    model.eval()
    for index, (data, target) in enumerate(tqdm(lidc_validation)):
        reconstruction = model(data.to(device))
        loss = loss_fcn(target.to(device), reconstruction)
        validation_loss[epoch] += loss.item()

    if validation_loss[epoch] < best_loss:
        best_loss = validation_loss[epoch]
        model.save(savefolder.joinpath("FBPConvNet_min_val.pt"), epoch=epoch, training=train_param, dataset=experiment.param)

    print(f"Epoch {epoch}: train {train_loss[epoch]:.4f} validation {validation_loss[epoch]:.4f}")

model.save(final_result_fname, training=train_param, dataset=experiment.param)
