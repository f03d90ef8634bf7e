import argparse

import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from tqdm import tqdm, trange
from transformers import AdamW, AutoTokenizer, get_linear_schedule_with_warmup

from simcse_model import SimCSEModel


def load_sentences(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_file", default="wiki1m_for_simcse.txt")
    parser.add_argument("--model_name", default="bert-base-uncased")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=3e-5)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    sentences = load_sentences(args.train_file)
    enc = tokenizer(sentences, padding="max_length", truncation=True, max_length=32, return_tensors="pt")
    train_data = TensorDataset(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])
    train_dataloader = DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=args.batch_size,
                                  num_workers=4, pin_memory=True)

    model = SimCSEModel(args.model_name, temperature=0.05).to(device)
    optimizer = AdamW(model.parameters(), lr=args.lr)
    t_total = len(train_dataloader) // args.gradient_accumulation_steps * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=0, num_training_steps=t_total)

    model.train()
    for epoch in trange(args.epochs, desc="Epoch"):
        running_loss = 0.0
        for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
            batch = tuple(t.to(device) for t in batch)
            input_ids, attention_mask, token_type_ids = batch
            # zero the parameter gradients
            optimizer.zero_grad()
            outputs = model(input_ids, attention_mask, token_type_ids)
            loss = outputs["loss"]

            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            running_loss += loss.item()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                optimizer.step()
                scheduler.step()  # Update learning rate schedule
                model.zero_grad()
        print(f"epoch {epoch}: loss {running_loss / len(train_dataloader):.4f}")
    model.save_pretrained("simcse_unsup")


if __name__ == "__main__":
    main()
