import numpy as np
import torch


class LossesTrackEpoch:
    def __init__(self, num_iterations):
        # classes
        self.num_iterations = num_iterations
        self.validation_losses = {}
        self.train_losses = {}
        self.train_iteration_counts = 0
        self.validation_iteration_counts = 0

    def set_validation_losses(self, keys):
        for key in keys:
            self.validation_losses[key] = 0
        return

    def set_train_losses(self, keys):
        for key in keys:
            self.train_losses[key] = 0
        return

    def update_train_losses(self, loss):
        for key in loss:
            self.train_losses[key] += loss[key]
        self.train_iteration_counts += 1
        return

    def update_validaiton_losses(self, loss):
        for key in loss:
            self.validation_losses[key] += loss[key]
        self.validation_iteration_counts += 1
        return

    def restart_train_losses(self):
        for key in self.train_losses.keys():
            self.train_losses[key] = 0
        self.train_iteration_counts = 0
        return

    def restart_validation_losses(self):
        for key in self.validation_losses.keys():
            self.validation_losses[key] = 0
        self.validation_iteration_counts = 0
        return


class Metrics:
    def __init__(self, nbr_classes, num_iterations_epoch, scales):
        self.nbr_classes = nbr_classes
        self.evaluator = {scale: np.zeros((nbr_classes, nbr_classes)) for scale in scales}
        self.losses_track = LossesTrackEpoch(num_iterations_epoch)

    def add_batch(self, prediction, target):
        for scale in self.evaluator:
            pred = torch.argmax(prediction[scale], dim=1).cpu().numpy().reshape(-1)
            true = target[scale].cpu().numpy().reshape(-1)
            mask = true != 255
            self.evaluator[scale] += np.bincount(
                self.nbr_classes * true[mask].astype(int) + pred[mask], minlength=self.nbr_classes ** 2
            ).reshape(self.nbr_classes, self.nbr_classes)

    def get_semantics_mIoU(self, scale):
        hist = self.evaluator[scale]
        iou = np.diag(hist) / (hist.sum(1) + hist.sum(0) - np.diag(hist) + 1e-10)
        return np.nanmean(iou)

    def reset_evaluator(self):
        for scale in self.evaluator:
            self.evaluator[scale][:] = 0
