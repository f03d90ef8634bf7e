import math

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.optim.lr_scheduler import StepLR

import task_generator as tg

FEATURE_DIM = 64
RELATION_DIM = 8
CLASS_NUM = 5
SAMPLE_NUM_PER_CLASS = 5
BATCH_NUM_PER_CLASS = 15
EPISODE = 500000
TEST_EPISODE = 600
LEARNING_RATE = 0.001
GPU = 0


class CNNEncoder(nn.Module):
    def __init__(self):
        super(CNNEncoder, self).__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 64, kernel_size=3, padding=0),
                                    nn.BatchNorm2d(64, momentum=1, affine=True), nn.ReLU(), nn.MaxPool2d(2))
        self.layer2 = nn.Sequential(nn.Conv2d(64, 64, kernel_size=3, padding=0),
                                    nn.BatchNorm2d(64, momentum=1, affine=True), nn.ReLU(), nn.MaxPool2d(2))
        self.layer3 = nn.Sequential(nn.Conv2d(64, 64, kernel_size=3, padding=1),
                                    nn.BatchNorm2d(64, momentum=1, affine=True), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(64, 64, kernel_size=3, padding=1),
                                    nn.BatchNorm2d(64, momentum=1, affine=True), nn.ReLU())

    def forward(self, x):
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))


class RelationNetwork(nn.Module):
    def __init__(self, input_size, hidden_size):
        super(RelationNetwork, self).__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(128, 64, kernel_size=3, padding=0),
                                    nn.BatchNorm2d(64, momentum=1, affine=True), nn.ReLU(), nn.MaxPool2d(2))
        self.layer2 = nn.Sequential(nn.Conv2d(64, 64, kernel_size=3, padding=0),
                                    nn.BatchNorm2d(64, momentum=1, affine=True), nn.ReLU(), nn.MaxPool2d(2))
        self.fc1 = nn.Linear(input_size * 3 * 3, hidden_size)
        self.fc2 = nn.Linear(hidden_size, 1)

    def forward(self, x):
        out = self.layer2(self.layer1(x))
        out = out.view(out.size(0), -1)
        out = torch.relu(self.fc1(out))
        return torch.sigmoid(self.fc2(out))


def relations_of(feature_encoder, relation_network, samples, batches, num_batch):
    sample_features = feature_encoder(Variable(samples).cuda(GPU))
    sample_features = sample_features.view(CLASS_NUM, SAMPLE_NUM_PER_CLASS, FEATURE_DIM, 19, 19).sum(1).squeeze(1)
    batch_features = feature_encoder(Variable(batches).cuda(GPU))
    sample_features_ext = sample_features.unsqueeze(0).repeat(num_batch, 1, 1, 1, 1)
    batch_features_ext = torch.transpose(batch_features.unsqueeze(0).repeat(CLASS_NUM, 1, 1, 1, 1), 0, 1)
    relation_pairs = torch.cat((sample_features_ext, batch_features_ext), 2).view(-1, FEATURE_DIM * 2, 19, 19)
    return relation_network(relation_pairs).view(-1, CLASS_NUM)


def main():
    metatrain_folders, metatest_folders = tg.mini_imagenet_folders()
    feature_encoder = CNNEncoder().cuda(GPU)
    relation_network = RelationNetwork(FEATURE_DIM, RELATION_DIM).cuda(GPU)
    feature_encoder_optim = torch.optim.Adam(feature_encoder.parameters(), lr=LEARNING_RATE)
    feature_encoder_scheduler = StepLR(feature_encoder_optim, step_size=100000, gamma=0.5)
    relation_network_optim = torch.optim.Adam(relation_network.parameters(), lr=LEARNING_RATE)
    relation_network_scheduler = StepLR(relation_network_optim, step_size=100000, gamma=0.5)
    mse = nn.MSELoss().cuda(GPU)
    last_accuracy = 0.0

    for episode in range(EPISODE):
        task = tg.MiniImagenetTask(metatrain_folders, CLASS_NUM, SAMPLE_NUM_PER_CLASS, BATCH_NUM_PER_CLASS)
        sample_dataloader = tg.get_mini_imagenet_data_loader(task, num_per_class=SAMPLE_NUM_PER_CLASS, split="train", shuffle=False)
        batch_dataloader = tg.get_mini_imagenet_data_loader(task, num_per_class=BATCH_NUM_PER_CLASS, split="test", shuffle=True)
        samples, sample_labels = next(iter(sample_dataloader))
        batches, batch_labels = next(iter(batch_dataloader))

        relations = relations_of(feature_encoder, relation_network, samples, batches, BATCH_NUM_PER_CLASS * CLASS_NUM)
        one_hot_labels = Variable(torch.zeros(BATCH_NUM_PER_CLASS * CLASS_NUM, CLASS_NUM).scatter_(1, batch_labels.view(-1, 1), 1).cuda(GPU))
        loss = mse(relations, one_hot_labels)

        feature_encoder.zero_grad()
        relation_network.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(feature_encoder.parameters(), 0.5)
        torch.nn.utils.clip_grad_norm_(relation_network.parameters(), 0.5)
        feature_encoder_optim.step()
        relation_network_optim.step()
        feature_encoder_scheduler.step(episode)
        relation_network_scheduler.step(episode)

        if (episode + 1) % 5000 == 0:
            print("Testing...")
            accuracies = []
            for i in range(TEST_EPISODE):
                total_rewards = 0
                task = tg.MiniImagenetTask(metatest_folders, CLASS_NUM, SAMPLE_NUM_PER_CLASS, 15)
                sample_dataloader = tg.get_mini_imagenet_data_loader(task, num_per_class=SAMPLE_NUM_PER_CLASS, split="train", shuffle=False)
                test_dataloader = tg.get_mini_imagenet_data_loader(task, num_per_class=3, split="test", shuffle=False)
                sample_images, sample_labels = next(iter(sample_dataloader))
                for test_images, test_labels in test_dataloader:
                    batch_size = test_labels.shape[0]
                    with torch.no_grad():
                        relations = relations_of(feature_encoder, relation_network, sample_images, test_images, batch_size)
                    _, predict_labels = torch.max(relations.data, 1)
                    rewards = [1 if predict_labels[j] == test_labels[j] else 0 for j in range(batch_size)]
                    total_rewards += np.sum(rewards)
                accuracies.append(total_rewards / 1.0 / CLASS_NUM / 15)
            test_accuracy = np.mean(accuracies)
            print("test accuracy:", test_accuracy)
            if test_accuracy > last_accuracy:
                torch.save(feature_encoder.state_dict(), "./models/miniimagenet_feature_encoder.pkl")
                torch.save(relation_network.state_dict(), "./models/miniimagenet_relation_network.pkl")
                last_accuracy = test_accuracy


if __name__ == '__main__':
    main()
