"""The basic class that contains all the API needed for the implementation of an unbiased learning to rank algorithm."""
from abc import ABC, abstractmethod

import numpy as np
import torch

import ultra.utils


class BaseAlgorithm(ABC):
    """The basic class that contains all the API needed for the
        implementation of an unbiased learning to rank algorithm."""

    PADDING_SCORE = -100000

    @abstractmethod
    def __init__(self, data_set, exp_settings, forward_only=False):
        self.is_training = None
        self.docid_inputs = None
        self.letor_features = None
        self.labels = None
        self.output = None
        self.learning_rate = None
        self.global_step = None

    @abstractmethod
    def train(self, input_feed):
        pass

    @abstractmethod
    def validation(self, input_feed):
        pass

    def create_model(self, feature_size):
        if not hasattr(self, "model"):
            model = ultra.utils.find_class(self.exp_settings['ranking_model'])(
                self.exp_settings['ranking_model_hparams'], feature_size)
        return model.to(device=self.cuda)

    def create_input_feed(self, input_feed, list_size):
        self.labels = []
        self.docid_inputs = []
        self.letor_features = input_feed["letor_features"]
        for i in range(list_size):
            self.docid_inputs.append(input_feed[self.docid_inputs_name[i]])
            self.labels.append(input_feed[self.labels_name[i]])
        self.labels = np.transpose(self.labels)
        self.labels = torch.from_numpy(self.labels).to(device=self.cuda)
        self.docid_inputs = torch.as_tensor(data=self.docid_inputs, dtype=torch.int64)

    def ranking_model(self, model, list_size):
        output_scores = self.get_ranking_scores(model=model, input_id_list=self.docid_inputs[:list_size])
        return torch.cat(output_scores, 1)

    def get_ranking_scores(self, model, input_id_list):
        PAD_embed = np.zeros((1, self.feature_size), dtype=np.float32)
        letor_features = np.concatenate((self.letor_features, PAD_embed), axis=0)
        input_feature_list = []
        for i in range(len(input_id_list)):
            input_feature_list.append(torch.from_numpy(np.take(letor_features, input_id_list[i], 0)))
        return model.forward(input_feature_list, self.is_training)

    def remove_padding_for_metric_eval(self, input_id_list, model_output):
        output_scores = torch.unbind(model_output, dim=1)
        padding_flags = [(ids < self.letor_features.shape[0]).to(device=self.cuda) for ids in input_id_list]
        padded = [torch.where(flag, score, torch.full_like(score, self.PADDING_SCORE))
                  for flag, score in zip(padding_flags, output_scores)]
        return torch.stack(padded, dim=1)

    def create_summary(self, scalar_name, summarize_name, value, is_training):
        if is_training:
            self.train_summary[scalar_name] = value
        else:
            self.eval_summary[scalar_name] = value
        self.writer.add_scalar(summarize_name, value, self.global_step)

    def softmax_loss(self, output, labels, propensity=None):
        if propensity is None:
            propensity = torch.ones_like(labels)
        weighted_labels = (labels + 0.0000001) * propensity
        label_dis = weighted_labels / torch.sum(weighted_labels, 1, keepdim=True)
        label_dis = torch.nan_to_num(label_dis)
        loss = torch.sum(-label_dis * torch.log_softmax(output, dim=1), dim=1)
        return torch.sum(loss) / torch.sum(weighted_labels)
