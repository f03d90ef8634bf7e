import pandas as pd
import torch
import torchvision

from opensoundscape.datasets import SingleTargetAudioDataset
from opensoundscape.torch.predict import predict
from opensoundscape.torch.train import train

train_df = pd.read_csv("train.csv")
valid_df = pd.read_csv("valid.csv")
label_dict = {0: "absent", 1: "present"}

train_dataset = SingleTargetAudioDataset(df=train_df, label_dict=label_dict, label_column="NumericLabels",
                                         filename_column="Destination")
valid_dataset = SingleTargetAudioDataset(df=valid_df, label_dict=label_dict, label_column="NumericLabels",
                                         filename_column="Destination")

model = torchvision.models.resnet18(pretrained=True)
model.fc = torch.nn.Linear(model.fc.in_features, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()

history = train(save_dir="./model_checkpoints", model=model, train_dataset=train_dataset,
                valid_dataset=valid_dataset, optimizer=optimizer, loss_fn=loss_fn,
                epochs=10, batch_size=16, num_workers=4)
scores = predict(model, valid_dataset, batch_size=16, num_workers=4, apply_softmax=True,
                 label_dict=list(label_dict.values()))
