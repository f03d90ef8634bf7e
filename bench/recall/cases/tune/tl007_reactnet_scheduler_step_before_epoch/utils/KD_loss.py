import torch.nn as nn
import torch.nn.functional as F


class DistributionLoss(nn.Module):
    """The KL-divergence loss for the binary student model and real teacher output."""

    def forward(self, model_output, real_output):
        model_output_log_prob = F.log_softmax(model_output, dim=1)
        real_output_soft = F.softmax(real_output, dim=1)
        real_output_soft = real_output_soft.unsqueeze(1)
        model_output_log_prob = model_output_log_prob.unsqueeze(2)
        cross_entropy_loss = -0.0 - (real_output_soft @ model_output_log_prob)
        return cross_entropy_loss.mean()
