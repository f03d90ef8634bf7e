import torch
import torch.nn as nn


class Net(nn.Module):
    """MCAN reduced to its shape: embeddings, an LSTM, dropout-regularised fusion."""

    def __init__(self, __C, pretrained_emb, token_size, answer_size):
        super(Net, self).__init__()
        self.embedding = nn.Embedding(num_embeddings=token_size, embedding_dim=__C.WORD_EMBED_SIZE)
        if __C.USE_GLOVE:
            self.embedding.weight.data.copy_(torch.from_numpy(pretrained_emb))
        self.lstm = nn.LSTM(input_size=__C.WORD_EMBED_SIZE, hidden_size=__C.HIDDEN_SIZE, num_layers=1,
                            batch_first=True)
        self.img_feat_linear = nn.Linear(__C.IMG_FEAT_SIZE, __C.HIDDEN_SIZE)
        self.dropout = nn.Dropout(__C.DROPOUT_R)
        self.proj_norm = nn.LayerNorm(__C.FLAT_OUT_SIZE)
        self.proj = nn.Linear(__C.FLAT_OUT_SIZE, answer_size)

    def forward(self, img_feat, ques_ix):
        lang_feat, _ = self.lstm(self.embedding(ques_ix))
        img_feat = self.img_feat_linear(img_feat)
        fused = self.dropout(lang_feat.mean(1) + img_feat.mean(1))
        return torch.sigmoid(self.proj(self.proj_norm(fused)))
