import numpy as np
import torch
import torch.utils.data as Data


class DataSet(Data.Dataset):
    """Reduced: precomputed image features, tokenised questions and answer scores."""

    def __init__(self, __C):
        self.__C = __C
        self.ques_list = []
        self.ix_to_ans = {}
        self.token_size = 20000
        self.ans_size = 3129
        self.pretrained_emb = np.zeros((self.token_size, __C.WORD_EMBED_SIZE), dtype=np.float32)
        self.data_size = len(self.ques_list)

    def __getitem__(self, idx):
        img_feat = torch.zeros(100, self.__C.IMG_FEAT_SIZE)
        ques_ix = torch.zeros(14, dtype=torch.long)
        ans = torch.zeros(self.ans_size)
        return img_feat, ques_ix, ans

    def __len__(self):
        return self.data_size
