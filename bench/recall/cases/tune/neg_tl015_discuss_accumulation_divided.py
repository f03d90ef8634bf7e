import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# 960 training instances, at most 64 fit in memory at once: 15 batches of 64
features = torch.randn(960, 100)
labels = torch.randint(0, 2, (960,))
training_set = DataLoader(TensorDataset(features, labels), batch_size=64, shuffle=True)

model = nn.Sequential(nn.Linear(100, 256), nn.ReLU(), nn.Linear(256, 2)).to(device)
loss_function = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
accumulation_steps = 2

for epoch in range(10):
    model.zero_grad()                                   # Reset gradients tensors
    for i, (inputs, labels) in enumerate(training_set):
        inputs, labels = inputs.to(device), labels.to(device)
        predictions = model(inputs)                     # Forward pass
        loss = loss_function(predictions, labels)       # Compute loss function
        loss = loss / accumulation_steps                # Normalize our loss (if averaged)
        loss.backward()                                 # Backward pass
        if (i + 1) % accumulation_steps == 0:           # Wait for several backward steps
            optimizer.step()                            # Now we can do an optimizer step
            model.zero_grad()                           # Reset gradients tensors
