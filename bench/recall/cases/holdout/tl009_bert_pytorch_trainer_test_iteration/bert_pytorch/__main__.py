import argparse

from torch.utils.data import DataLoader

from .model import BERT
from .trainer.pretrain import BERTTrainer
from .dataset import BERTDataset, WordVocab


def train():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--train_dataset", required=True, type=str)
    parser.add_argument("-t", "--test_dataset", type=str, default=None)
    parser.add_argument("-v", "--vocab_path", required=True, type=str)
    parser.add_argument("-o", "--output_path", required=True, type=str)
    parser.add_argument("-hs", "--hidden", type=int, default=256)
    parser.add_argument("-l", "--layers", type=int, default=8)
    parser.add_argument("-a", "--attn_heads", type=int, default=8)
    parser.add_argument("-s", "--seq_len", type=int, default=20)
    parser.add_argument("-b", "--batch_size", type=int, default=64)
    parser.add_argument("-e", "--epochs", type=int, default=10)
    parser.add_argument("-w", "--num_workers", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    vocab = WordVocab.load_vocab(args.vocab_path)
    train_dataset = BERTDataset(args.train_dataset, vocab, seq_len=args.seq_len)
    test_dataset = BERTDataset(args.test_dataset, vocab, seq_len=args.seq_len) \
        if args.test_dataset is not None else None

    train_data_loader = DataLoader(train_dataset, batch_size=args.batch_size, num_workers=args.num_workers)
    test_data_loader = DataLoader(test_dataset, batch_size=args.batch_size, num_workers=args.num_workers) \
        if test_dataset is not None else None

    bert = BERT(len(vocab), hidden=args.hidden, n_layers=args.layers, attn_heads=args.attn_heads)
    trainer = BERTTrainer(bert, len(vocab), train_dataloader=train_data_loader, test_dataloader=test_data_loader,
                          lr=args.lr)

    for epoch in range(args.epochs):
        trainer.train(epoch)
        trainer.save(epoch, args.output_path)

        if test_data_loader is not None:
            trainer.test(epoch)


if __name__ == "__main__":
    train()
