import torch
from torch.autograd import Variable
import torch.nn as nn
import torch.nn.init as init
import torch.nn.functional as F
from .alias_multinomial import AliasMultinomial


# a small value
EPSILON = 1e-8

PIVOTS_DROPOUT = 0.3
DOC_VECS_DROPOUT = 0.1
DOC_WEIGHTS_DROPOUT = 0.1
DOC_WEIGHTS_INIT = 0.01


class loss(nn.Module):
    """The main thing to minimize."""

    def __init__(self, topics, word_vectors, unigram_distribution,
                 n_documents, lambda_const=100.0, num_sampled=15):
        super(loss, self).__init__()

        self.topics = topics
        self.n_topics = topics.n_topics
        self.alpha = 1.0/self.n_topics
        self.lambda_const = lambda_const

        # document distributions (logits) over the topics
        self.doc_weights = nn.Embedding(n_documents, self.n_topics)
        init.normal(self.doc_weights.weight, std=DOC_WEIGHTS_INIT)
        self.dropout = nn.Dropout(DOC_WEIGHTS_DROPOUT)

        self.neg = negative_sampling_loss(word_vectors, unigram_distribution, num_sampled)

    def forward(self, doc_indices, pivot_words, target_words):
        doc_weights = self.doc_weights(doc_indices)
        doc_weights = self.dropout(doc_weights)

        doc_vectors = self.topics(doc_weights)

        neg_loss = self.neg(pivot_words, target_words, doc_vectors)
        dirichlet_loss = F.log_softmax(doc_weights).sum(1).mean()
        dirichlet_loss *= self.lambda_const*(1.0 - self.alpha)

        return neg_loss, dirichlet_loss


class negative_sampling_loss(nn.Module):

    def __init__(self, word_vectors, word_distribution, num_sampled=10):
        super(negative_sampling_loss, self).__init__()

        vocab_size, embedding_dim = word_vectors.size()
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.embedding.weight.data = word_vectors

        # 'AliasMultinomial' is a lot faster than torch.multinomial
        self.multinomial = AliasMultinomial(word_distribution)

        self.num_sampled = num_sampled
        self.embedding_dim = embedding_dim
        self.dropout1 = nn.Dropout(PIVOTS_DROPOUT)
        self.dropout2 = nn.Dropout(DOC_VECS_DROPOUT)

    def forward(self, pivot_words, target_words, doc_vectors):
        batch_size, window_size = target_words.size()

        pivot_vectors = self.embedding(pivot_words)

        pivot_vectors = self.dropout1(pivot_vectors)
        doc_vectors = self.dropout2(doc_vectors)
        context_vectors = doc_vectors + pivot_vectors

        targets = self.embedding(target_words)

        unsqueezed_context = context_vectors.unsqueeze(1)

        log_targets = (targets*unsqueezed_context).sum(2).sigmoid()\
            .clamp(min=EPSILON).log()

        # sample negative words for each word in the window,
        # shape: [batch_size*window_size*num_sampled]
        noise = self.multinomial.draw(batch_size*window_size*self.num_sampled)
        noise = Variable(noise).view(batch_size, window_size*self.num_sampled)

        # shape: [batch_size, window_size*num_sampled, embedding_dim]
        noise = self.embedding(noise)
        noise = noise.view(batch_size, window_size, self.num_sampled, self.embedding_dim)

        unsqueezed_context = context_vectors.unsqueeze(1).unsqueeze(1)

        sum_log_sampled = (noise*unsqueezed_context).sum(3).neg().sigmoid()\
            .clamp(min=EPSILON).log().sum(2)

        neg_loss = log_targets + sum_log_sampled

        return neg_loss.sum(1).mean().neg()
