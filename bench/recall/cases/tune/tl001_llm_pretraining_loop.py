import torch


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())
    return loss


def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    with torch.no_grad():
        train_loss = sum(calc_loss_batch(x, y, model, device).item()
                         for i, (x, y) in enumerate(train_loader) if i < eval_iter)
        val_loss = sum(calc_loss_batch(x, y, model, device).item()
                       for i, (x, y) in enumerate(val_loader) if i < eval_iter)
    model.train()
    return train_loss / eval_iter, val_loss / eval_iter


def train_model_simple(model, train_loader, val_loader, optimizer, device,
                       num_epochs, eval_freq, eval_iter):
    global_step = -1
    for epoch in range(num_epochs):
        model.train()
        for x, y in train_loader:
            loss = calc_loss_batch(x, y, model, device)
            loss.backward(); optimizer.step()
            global_step += 1
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                print(f"Ep {epoch+1} (Step {global_step:06d}): Train {train_loss:.3f}, Val {val_loss:.3f}")
