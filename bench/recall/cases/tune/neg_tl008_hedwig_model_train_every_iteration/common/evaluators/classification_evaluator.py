import numpy as np
import torch
import torch.nn.functional as F
from sklearn import metrics


class ClassificationEvaluator(object):
    def __init__(self, dataset_cls, model, data_loader, batch_size, device):
        self.dataset_cls = dataset_cls
        self.model = model
        self.data_loader = data_loader
        self.batch_size = batch_size
        self.device = device

    def get_scores(self):
        self.model.eval()
        self.data_loader.init_epoch()
        total_loss = 0
        predicted_labels, target_labels = list(), list()

        with torch.no_grad():
            for batch_idx, batch in enumerate(self.data_loader):
                scores = self.model(batch.text)
                predicted_labels.extend(torch.argmax(scores, dim=1).cpu().detach().numpy())
                target_labels.extend(torch.argmax(batch.label, dim=1).cpu().detach().numpy())
                total_loss += F.cross_entropy(scores, torch.argmax(batch.label, dim=1), size_average=False).item()

        predicted_labels = np.array(predicted_labels)
        target_labels = np.array(target_labels)
        accuracy = metrics.accuracy_score(target_labels, predicted_labels)
        f1 = metrics.f1_score(target_labels, predicted_labels, average='macro')
        avg_loss = total_loss / len(self.data_loader.dataset.examples)
        return [accuracy, f1, avg_loss], ['accuracy', 'f1', 'cross_entropy_loss']
