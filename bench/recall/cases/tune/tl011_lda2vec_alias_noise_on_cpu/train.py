# Reconstructed after utils/training.py: the model is moved to the GPU and trained on
# minibatches of (document, pivot, window) indices. topic_embedding is imported and not
# included.
import numpy as np
import torch
import torch.optim as optim
from torch.autograd import Variable

from utils.lda2vec_loss import loss, topic_embedding


def train(data, unigram_distribution, word_vectors, doc_weights_init=None,
          n_topics=25, batch_size=4096, n_epochs=200, lambda_const=500.0, num_sampled=15,
          topics_weight_decay=1e-2, topics_lr=1e-3, doc_weights_lr=1e-3, word_vecs_lr=1e-3):
    n_windows = len(data)
    n_documents = len(np.unique(data[:, 0]))
    embedding_dim = word_vectors.shape[1]

    data = torch.LongTensor(data)
    word_vectors = torch.FloatTensor(word_vectors)
    unigram_distribution = torch.FloatTensor(unigram_distribution ** (3.0 / 4.0))
    unigram_distribution /= unigram_distribution.sum()

    topics = topic_embedding(n_topics, embedding_dim)
    model = loss(topics, word_vectors, unigram_distribution, n_documents, lambda_const, num_sampled)
    model.cuda()

    params = [
        {'params': [model.topics.topic_vectors], 'lr': topics_lr, 'weight_decay': topics_weight_decay},
        {'params': [model.doc_weights.weight], 'lr': doc_weights_lr},
        {'params': [model.neg.embedding.weight], 'lr': word_vecs_lr},
    ]
    optimizer = optim.Adam(params)
    n_batches = int(np.ceil(n_windows / batch_size))

    model.train()
    for epoch in range(1, n_epochs + 1):
        running_neg_loss = 0.0
        running_dirichlet_loss = 0.0
        permutation = torch.randperm(n_windows)
        for i in range(n_batches):
            batch = data[permutation[i * batch_size:(i + 1) * batch_size]].cuda()
            doc_indices = Variable(batch[:, 0], requires_grad=False)
            pivot_words = Variable(batch[:, 1], requires_grad=False)
            target_words = Variable(batch[:, 2:], requires_grad=False)

            neg_loss, dirichlet_loss = model(doc_indices, pivot_words, target_words)
            total_loss = neg_loss + dirichlet_loss

            optimizer.zero_grad()
            total_loss.backward()
            optimizer.step()

            running_neg_loss += neg_loss.item()
            running_dirichlet_loss += dirichlet_loss.item()
        print('{0} {1:.3f} {2:.3f}'.format(epoch, running_neg_loss / n_batches, running_dirichlet_loss / n_batches))
