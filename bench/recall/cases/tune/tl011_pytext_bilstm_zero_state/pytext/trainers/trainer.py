import torch
import torch.nn.functional as F

from pytext.models.doc_model import DocModel


class Trainer:
    def __init__(self, epochs: int = 10, use_cuda: bool = True) -> None:
        self.epochs = epochs
        self.device = torch.device("cuda" if use_cuda and torch.cuda.is_available() else "cpu")

    def train(self, train_iter, eval_iter, model: DocModel, optimizer: torch.optim.Optimizer):
        model.to(self.device)
        best_acc = 0.0
        for epoch in range(self.epochs):
            model.train()
            for tokens, seq_lens, labels in train_iter:
                tokens, labels = tokens.to(self.device), labels.to(self.device)
                optimizer.zero_grad()
                logits = model(tokens, seq_lens)
                loss = F.cross_entropy(logits, labels)
                loss.backward()
                optimizer.step()
            best_acc = max(best_acc, self.evaluate(eval_iter, model))
        return best_acc

    @torch.no_grad()
    def evaluate(self, eval_iter, model: DocModel) -> float:
        model.eval()
        correct = total = 0
        for tokens, seq_lens, labels in eval_iter:
            tokens, labels = tokens.to(self.device), labels.to(self.device)
            preds = model(tokens, seq_lens).argmax(dim=1)
            correct += (preds == labels).sum().item()
            total += labels.numel()
        return correct / max(total, 1)
