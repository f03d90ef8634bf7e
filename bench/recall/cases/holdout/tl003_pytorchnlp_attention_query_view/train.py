import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from model import Seq2Seq
from torchnlp.datasets import iwslt_dataset
from torchnlp.encoders.text import StaticTokenizerEncoder, stack_and_pad_tensors


def collate(batch, src_encoder, tgt_encoder):
    source = stack_and_pad_tensors([src_encoder.encode(row["en"]) for row in batch]).tensor
    target = stack_and_pad_tensors([tgt_encoder.encode(row["de"]) for row in batch]).tensor
    return source.t(), target.t()


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = iwslt_dataset(train=True)
    src_encoder = StaticTokenizerEncoder([row["en"] for row in train])
    tgt_encoder = StaticTokenizerEncoder([row["de"] for row in train])
    loader = DataLoader(train, batch_size=32, shuffle=True, num_workers=2,
                        collate_fn=lambda b: collate(b, src_encoder, tgt_encoder))

    model = Seq2Seq(src_encoder.vocab_size, tgt_encoder.vocab_size).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss(ignore_index=0)

    for epoch in range(10):
        model.train()
        for source, target in loader:
            source, target = source.to(device), target.to(device)
            optimizer.zero_grad()
            logits = model(source, target[:-1])
            loss = criterion(logits.reshape(-1, logits.size(-1)), target[1:].t().reshape(-1))
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
