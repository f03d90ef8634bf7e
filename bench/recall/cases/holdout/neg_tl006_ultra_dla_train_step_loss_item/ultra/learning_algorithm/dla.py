"""Training and testing the dual learning algorithm for unbiased learning to rank."""
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

import ultra.utils
from ultra.learning_algorithm.base_algorithm import BaseAlgorithm


class DenoisingNet(nn.Module):
    def __init__(self, input_vec_size):
        super(DenoisingNet, self).__init__()
        self.linear_layer = nn.Linear(input_vec_size, 1)
        self.elu_layer = nn.ELU()
        self.propensity_net = nn.Sequential(self.linear_layer, self.elu_layer)
        self.list_size = input_vec_size

    def forward(self, input_list):
        output_propensity_list = []
        for i in range(self.list_size):
            click_feature = [torch.unsqueeze(torch.zeros_like(input_list[i]), -1) for _ in range(self.list_size)]
            click_feature[i] = torch.unsqueeze(torch.ones_like(input_list[i]), -1)
            output_propensity_list.append(self.propensity_net(torch.cat(click_feature, 1)))
        return torch.cat(output_propensity_list, 1)


class DLA(BaseAlgorithm):
    """The Dual Learning Algorithm for unbiased learning to rank."""

    def __init__(self, data_set, exp_settings, forward_only=False):
        self.hparams = ultra.utils.hparams.HParams(
            learning_rate=0.05,
            max_gradient_norm=5.0,
            ranker_loss_weight=1.0,
            grad_strategy='ada',
        )
        self.cuda = torch.device('cuda')
        self.writer = SummaryWriter()
        self.train_summary = {}
        self.eval_summary = {}
        self.hparams.parse(exp_settings['learning_algorithm_hparams'])
        self.exp_settings = exp_settings
        self.max_candidate_num = exp_settings['max_candidate_num']
        self.feature_size = data_set.feature_size
        self.rank_list_size = exp_settings['selection_bias_cutoff']
        self.propensity_model = DenoisingNet(self.rank_list_size).to(device=self.cuda)
        self.model = self.create_model(self.feature_size)
        self.docid_inputs_name = ["docid_input{0}".format(i) for i in range(self.max_candidate_num)]
        self.labels_name = ["label{0}".format(i) for i in range(self.max_candidate_num)]
        self.learning_rate = float(self.hparams.learning_rate)
        self.propensity_learning_rate = self.learning_rate
        self.global_step = 0
        self.is_training = True
        self.logits_to_prob = nn.Softmax(dim=-1)
        self.optimizer_func = torch.optim.Adagrad
        self.loss_func = self.softmax_loss

    def separate_gradient_update(self):
        denoise_params = self.propensity_model.parameters()
        ranking_model_params = self.model.parameters()
        self.loss = self.exam_loss + self.hparams.ranker_loss_weight * self.rank_loss

        opt_denoise = self.optimizer_func(denoise_params, self.propensity_learning_rate)
        opt_ranker = self.optimizer_func(ranking_model_params, self.learning_rate)

        opt_denoise.zero_grad()
        opt_ranker.zero_grad()

        self.loss.backward()

        opt_denoise.step()
        opt_ranker.step()

    def train(self, input_feed):
        self.model.train()
        self.create_input_feed(input_feed, self.rank_list_size)
        train_output = self.ranking_model(self.model, self.rank_list_size)
        self.propensity_model.train()
        self.propensity = self.propensity_model(self.labels)
        reshaped_train_labels = torch.transpose(self.labels, 0, 1)
        self.propensity_weights = self.get_normalized_weights(self.logits_to_prob(self.propensity))
        self.rank_loss = self.loss_func(train_output, reshaped_train_labels, self.propensity_weights)

        self.relevance_weights = self.get_normalized_weights(self.logits_to_prob(train_output))
        self.exam_loss = self.loss_func(self.propensity, reshaped_train_labels, self.relevance_weights)

        self.loss = self.exam_loss + self.hparams.ranker_loss_weight * self.rank_loss
        self.separate_gradient_update()
        self.global_step += 1

        self.create_summary('Learning Rate', 'Learning_rate at global step %d' % self.global_step,
                            self.learning_rate, True)
        self.create_summary('Final Loss', 'Final Loss at global step %d' % self.global_step,
                            self.loss, True)
        return self.loss.item(), None, self.train_summary

    def validation(self, input_feed):
        self.model.eval()
        self.propensity_model.eval()
        self.create_input_feed(input_feed, self.max_candidate_num)
        self.output = self.ranking_model(self.model, self.max_candidate_num)
        pad_removed_output = self.remove_padding_for_metric_eval(self.docid_inputs, self.output)

        reshaped_labels = torch.transpose(self.labels, 0, 1)
        for metric in self.exp_settings['metrics']:
            for topn in self.exp_settings['metrics_topn']:
                metric_value = ultra.utils.make_ranking_metric_fn(metric, topn)(
                    reshaped_labels, pad_removed_output, None)
                self.writer.add_scalar('%s_%d' % (metric, topn), metric_value)
                self.eval_summary['%s_%d' % (metric, topn)] = metric_value
        return None, self.output, self.eval_summary

    def get_normalized_weights(self, propensity):
        propensity_list = torch.unbind(propensity, dim=1)
        pw_list = []
        for i in range(len(propensity_list)):
            pw_i = propensity_list[0] / propensity_list[i]
            pw_list.append(pw_i)
        return torch.stack(pw_list, dim=1)
