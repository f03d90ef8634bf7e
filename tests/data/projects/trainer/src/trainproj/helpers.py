import torch


def begin_step(optimizer):
    optimizer.zero_grad(set_to_none=True)


def prepare(model, optimizer):
    model.train()
    begin_step(optimizer)


def train_step(model, optimizer, batch):
    loss = model(batch).mean()
    loss.backward()
    optimizer.step()
    return loss.item()


def log(message):
    print(message)


def predict(model, batch):
    return model(batch).argmax(-1)


def predict_quietly(model, batch):
    with torch.no_grad():
        return model(batch).argmax(-1)
