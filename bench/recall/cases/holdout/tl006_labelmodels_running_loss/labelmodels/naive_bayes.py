import numpy as np
import torch
import torch.nn as nn

from .label_model import LabelModel, LearningConfig


class NaiveBayes(LabelModel):
    """A generative label model that assumes all labeling functions are conditionally independent given the true label."""

    def __init__(self, num_classes, num_lfs, init_acc=.9, acc_prior=0.025):
        super().__init__()
        self.num_classes = num_classes
        self.num_lfs = num_lfs
        self.acc_prior = acc_prior
        init_param = torch.tensor([np.log(init_acc)] * num_lfs)
        self.accuracy = nn.Parameter(init_param)
        self.propensity = nn.Parameter(torch.zeros([num_lfs]))
        self.class_balance = nn.Parameter(torch.zeros([num_classes]))

    def forward(self, votes):
        class_ll = self._get_norm_class_balance()
        conditional_ll = self._get_labeling_function_likelihoods(votes)
        joint_ll = conditional_ll + class_ll
        return torch.logsumexp(joint_ll, dim=1)

    def estimate_label_model(self, votes, config=None):
        if config is None:
            config = LearningConfig()
        self._do_estimate(votes, config)

    def _get_regularization_loss(self):
        return self.acc_prior * torch.norm(self.accuracy - torch.log(torch.tensor(.9)))

    def _get_labeling_function_likelihoods(self, votes):
        abstain = (votes == 0).float()
        lf_ll = torch.stack([(votes == c + 1).float() * self.accuracy
                             + (votes != c + 1).float() * (votes != 0).float() * torch.log(1 - torch.exp(self.accuracy).clamp(max=0.999))
                             for c in range(self.num_classes)], dim=1)
        return (lf_ll * (1 - abstain).unsqueeze(1)).sum(dim=2) + (abstain * -self.propensity).sum(dim=1, keepdim=True)

    def _get_norm_class_balance(self):
        return self.class_balance - torch.logsumexp(self.class_balance, dim=0)
