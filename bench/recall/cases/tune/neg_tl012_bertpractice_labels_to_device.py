"""Fine-tune bert-base-chinese for sentence classification."""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm
from transformers import BertModel, BertTokenizer, AdamW


class SentimentDataset(Dataset):
    def __init__(self, path, tokenizer, max_len=128):
        self.samples = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                text, label = line.rstrip("\n").split("\t")
                self.samples.append((text, int(label)))
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        text, label = self.samples[idx]
        enc = self.tokenizer(text, max_length=self.max_len, padding="max_length", truncation=True,
                             return_tensors="pt")
        return {
            "input_ids": enc["input_ids"].squeeze(0),
            "attention_mask": enc["attention_mask"].squeeze(0),
            "token_type_ids": enc["token_type_ids"].squeeze(0),
            "label": torch.tensor(label, dtype=torch.long),
        }


class BertClassifier(nn.Module):
    def __init__(self, bert_path, num_labels, dropout=0.1):
        super().__init__()
        self.bert = BertModel.from_pretrained(bert_path)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(self.bert.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids):
        pooled = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).pooler_output
        return self.fc(self.dropout(pooled))


def train_epoch(model, loader, criterion, optimizer, device):
    model.train()
    total_loss, correct, count = 0.0, 0, 0
    for batch in tqdm(loader):
        input_ids = batch["input_ids"].to(device)
        attention_mask = batch["attention_mask"].to(device)
        token_type_ids = batch["token_type_ids"].to(device)
        label = batch["label"].to(device)

        optimizer.zero_grad()
        logits = model(input_ids, attention_mask, token_type_ids)
        loss = criterion(logits, label)
        loss.backward()
        optimizer.step()

        total_loss += loss.item() * label.size(0)
        correct += (logits.argmax(dim=1) == label).sum().item()
        count += label.size(0)
    return total_loss / count, correct / count


def evaluate_model(model, loader, criterion, device):
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for batch in loader:
            input_ids = batch["input_ids"].to(device)
            attention_mask = batch["attention_mask"].to(device)
            token_type_ids = batch["token_type_ids"].to(device)
            label = batch["label"].to(device)
            logits = model(input_ids, attention_mask, token_type_ids)
            loss = criterion(logits, label)
            total_loss += loss.item() * label.size(0)
            correct += (logits.argmax(dim=1) == label).sum().item()
            count += label.size(0)
    return total_loss / count, correct / count


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    bert_path = "bert-base-chinese"
    tokenizer = BertTokenizer.from_pretrained(bert_path)
    train_set = SentimentDataset("data/train.tsv", tokenizer)
    dev_set = SentimentDataset("data/dev.tsv", tokenizer)
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
    dev_loader = DataLoader(dev_set, batch_size=64, shuffle=False)

    model = BertClassifier(bert_path, num_labels=2).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = AdamW(model.parameters(), lr=2e-5)

    best_acc = 0.0
    for epoch in range(3):
        train_loss, train_acc = train_epoch(model, train_loader, criterion, optimizer, device)
        dev_loss, dev_acc = evaluate_model(model, dev_loader, criterion, device)
        print(f"epoch {epoch}: train loss {train_loss:.4f} acc {train_acc:.4f} | dev loss {dev_loss:.4f} "
              f"acc {dev_acc:.4f}")
        if dev_acc > best_acc:
            best_acc = dev_acc
            os.makedirs("checkpoints", exist_ok=True)
            torch.save(model.state_dict(), "checkpoints/best.pt")


if __name__ == "__main__":
    main()
