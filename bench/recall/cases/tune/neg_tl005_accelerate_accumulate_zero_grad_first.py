# The usage guide's gradient-accumulation loop the issue quotes (optimizer.zero_grad() at
# the top of each iteration, inside accelerator.accumulate), with the model, data and
# scheduler reconstructed around it. Inside the accumulate context the prepared optimizer
# skips step() and zero_grad() until the gradients are synchronized.
import torch
from torch.utils.data import DataLoader, TensorDataset
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup


def main():
    accelerator = Accelerator(gradient_accumulation_steps=4)

    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", num_labels=2)
    input_ids = torch.randint(0, 28996, (1024, 128))
    labels = torch.randint(0, 2, (1024,))
    training_dataloader = DataLoader(TensorDataset(input_ids, labels), batch_size=8, shuffle=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=100,
                                                num_training_steps=len(training_dataloader) * 3)
    loss_function = torch.nn.CrossEntropyLoss()

    model, optimizer, training_dataloader, scheduler = accelerator.prepare(
        model, optimizer, training_dataloader, scheduler
    )

    model.train()
    for epoch in range(3):
        for input_ids, targets in training_dataloader:
            with accelerator.accumulate(model):
                optimizer.zero_grad()
                inputs = input_ids
                outputs = model(inputs).logits
                loss = loss_function(outputs, targets)
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
        accelerator.print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
