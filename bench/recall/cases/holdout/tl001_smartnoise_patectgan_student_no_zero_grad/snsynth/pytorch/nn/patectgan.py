import math

import numpy as np
import torch
from torch import optim
from torch.nn import BCELoss, Dropout, LeakyReLU, Linear, Module, ReLU, Sequential, Sigmoid

from ctgan.data_sampler import DataSampler
from ctgan.data_transformer import DataTransformer
from ctgan.synthesizers.ctgan import CTGANSynthesizer, Generator

from .privacy_utils import moments_acc, pate, weights_init


class Discriminator(Module):
    def __init__(self, input_dim, discriminator_dim, loss, pac=10):
        super(Discriminator, self).__init__()
        torch.cuda.manual_seed(0)
        torch.manual_seed(0)
        dim = input_dim * pac
        self.pac = pac
        self.pacdim = dim
        seq = []
        for item in list(discriminator_dim):
            seq += [Linear(dim, item), LeakyReLU(0.2), Dropout(0.5)]
            dim = item
        seq += [Linear(dim, 1)]
        if loss == "cross_entropy":
            seq += [Sigmoid()]
        self.seq = Sequential(*seq)

    def forward(self, input):
        assert input.size()[0] % self.pac == 0
        return self.seq(input.view(-1, self.pacdim))


class PATECTGAN(CTGANSynthesizer):
    def __init__(self, embedding_dim=128, generator_dim=(256, 256), discriminator_dim=(256, 256),
                 generator_lr=2e-4, generator_decay=1e-6, discriminator_lr=2e-4, discriminator_decay=1e-6,
                 batch_size=500, discriminator_steps=1, epochs=300, pac=1, cuda=True,
                 epsilon=1, binary=False, regularization=None, loss="cross_entropy", teacher_iters=5,
                 student_iters=5, sample_per_teacher=1000, delta=None, noise_multiplier=1e-3,
                 moments_order=100, category_epsilon_pct=0.1):
        self._embedding_dim = embedding_dim
        self._generator_dim = generator_dim
        self._discriminator_dim = discriminator_dim
        self._generator_lr = generator_lr
        self._generator_decay = generator_decay
        self._discriminator_lr = discriminator_lr
        self._discriminator_decay = discriminator_decay
        self._batch_size = batch_size
        self._epochs = epochs
        self.pac = pac
        self.epsilon = epsilon
        self.loss = loss
        self.teacher_iters = teacher_iters
        self.student_iters = student_iters
        self.sample_per_teacher = sample_per_teacher
        self.noise_multiplier = noise_multiplier
        self.moments_order = moments_order
        self.delta = delta
        self._device = torch.device("cuda:0" if cuda and torch.cuda.is_available() else "cpu")

    def train(self, data, categorical_columns=None, update_epsilon=None):
        self._transformer = DataTransformer()
        self._transformer.fit(data, discrete_columns=categorical_columns)
        train_data = self._transformer.transform(data)
        data_dim = self._transformer.output_dimensions

        if self.delta is None:
            self.delta = 1 / (train_data.shape[0] * np.sqrt(train_data.shape[0]))

        # number of teachers, each trained on a disjoint partition of the data
        self.num_teachers = int(len(train_data) / self.sample_per_teacher) + 1
        data_partitions = np.array_split(train_data, self.num_teachers)
        sampler = DataSampler(train_data, self._transformer.output_info_list, True)
        cond_dim = sampler.dim_cond_vec()

        self._generator = Generator(self._embedding_dim + cond_dim, self._generator_dim, data_dim).to(self._device)
        student_disc = Discriminator(data_dim + cond_dim, self._discriminator_dim, self.loss, self.pac).to(self._device)
        student_disc.apply(weights_init)
        teacher_disc = [Discriminator(data_dim + cond_dim, self._discriminator_dim, self.loss, self.pac).to(self._device)
                        for _ in range(self.num_teachers)]
        for disc in teacher_disc:
            disc.apply(weights_init)

        optimizer_g = optim.Adam(self._generator.parameters(), lr=self._generator_lr, betas=(0.5, 0.9),
                                 weight_decay=self._generator_decay)
        optimizer_s = optim.Adam(student_disc.parameters(), lr=2e-4, betas=(0.5, 0.9))
        optimizer_t = [optim.Adam(teacher_disc[i].parameters(), lr=self._discriminator_lr, betas=(0.5, 0.9),
                                  weight_decay=self._discriminator_decay) for i in range(self.num_teachers)]

        criterion = BCELoss()
        noise_multiplier = self.noise_multiplier
        alphas = torch.tensor([0.0 for i in range(self.moments_order)], device=self._device)
        l_list = 1 + torch.tensor(range(self.moments_order), device=self._device)
        eps = torch.zeros(1)

        mean = torch.zeros(self._batch_size, self._embedding_dim, device=self._device)
        std = mean + 1
        real_label = 1
        fake_label = 0

        while eps.item() < self.epsilon:
            # train teacher discriminators
            for t_2 in range(self.teacher_iters):
                for i in range(self.num_teachers):
                    partition_data = data_partitions[i]
                    fakez = torch.normal(mean=mean, std=std)
                    condvec = sampler.sample_condvec(self._batch_size)
                    c1 = torch.from_numpy(condvec[0]).to(self._device)
                    fakez = torch.cat([fakez, c1], dim=1)
                    idx = np.random.randint(len(partition_data), size=self._batch_size)
                    real = torch.from_numpy(partition_data[idx].astype("float32")).to(self._device)
                    real_cat = torch.cat([real, c1], dim=1)

                    optimizer_t[i].zero_grad()
                    y_all = torch.cat([teacher_disc[i](torch.cat([self._generator(fakez), c1], dim=1)),
                                       teacher_disc[i](real_cat)])
                    label_fake = torch.full((int(self._batch_size / self.pac), 1), fake_label,
                                            dtype=torch.float, device=self._device)
                    label_true = torch.full((int(self._batch_size / self.pac), 1), real_label,
                                            dtype=torch.float, device=self._device)
                    labels = torch.cat([label_fake, label_true])
                    loss_t = criterion(y_all.squeeze(), labels.squeeze())
                    loss_t.backward()
                    optimizer_t[i].step()

            # train student discriminator
            for t_3 in range(self.student_iters):
                fakez = torch.normal(mean=mean, std=std)
                condvec = sampler.sample_condvec(self._batch_size)
                c1 = torch.from_numpy(condvec[0]).to(self._device)
                fakez = torch.cat([fakez, c1], dim=1)
                fake = torch.cat([self._generator(fakez), c1], dim=1)

                predictions, votes = pate(fake, teacher_disc, noise_multiplier, device=self._device)
                output = student_disc(fake.detach())

                # update moments accountant
                alphas = alphas + moments_acc(self.num_teachers, votes, noise_multiplier, l_list, device=self._device)

                loss_s = criterion(output.squeeze(), predictions.float().to(self._device).squeeze())
                loss_s.backward()
                optimizer_s.step()

            # train generator
            fakez = torch.normal(mean=mean, std=std)
            condvec = sampler.sample_condvec(self._batch_size)
            c1 = torch.from_numpy(condvec[0]).to(self._device)
            fakez = torch.cat([fakez, c1], dim=1)
            fake = torch.cat([self._generator(fakez), c1], dim=1)

            optimizer_g.zero_grad()
            y_fake = student_disc(fake)
            loss_g = criterion(y_fake.squeeze(), torch.ones(y_fake.size(0), device=self._device))
            loss_g.backward()
            optimizer_g.step()

            eps = min((alphas - math.log(self.delta)) / l_list)
