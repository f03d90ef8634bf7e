import logging
from typing import Dict, List, Tuple, Union

import numpy as np
import torch
from scipy.sparse import csr_matrix
from sklearn.metrics.pairwise import cosine_similarity
from transformers import (BertModel, BertTokenizer, XLMModel, XLMTokenizer, RobertaModel, RobertaTokenizer,
                          XLMRobertaModel, XLMRobertaTokenizer)

LOG = logging.getLogger(__name__)


class EmbeddingLoader(object):
    def __init__(self, model: str = "bert-base-multilingual-cased", device=torch.device('cpu'), layer: int = 8):
        TR_Models = {
            'bert-base-uncased': (BertModel, BertTokenizer),
            'bert-base-multilingual-cased': (BertModel, BertTokenizer),
            'bert-base-multilingual-uncased': (BertModel, BertTokenizer),
            'xlm-mlm-100-1280': (XLMModel, XLMTokenizer),
            'roberta-base': (RobertaModel, RobertaTokenizer),
            'xlm-roberta-base': (XLMRobertaModel, XLMRobertaTokenizer),
            'xlm-roberta-large': (XLMRobertaModel, XLMRobertaTokenizer),
        }

        self.model = model
        self.device = device
        self.layer = layer
        self.emb_model = None
        self.tokenizer = None

        if model in TR_Models:
            model_class, tokenizer_class = TR_Models[model]
            self.emb_model = model_class.from_pretrained(model, output_hidden_states=True)
            self.emb_model.to(self.device)
            self.tokenizer = tokenizer_class.from_pretrained(model)
            LOG.info("Initialized the EmbeddingLoader with model: {}".format(self.model))

    def get_embed_list(self, sent_pair: List[List[str]]) -> torch.Tensor:
        if self.emb_model is not None:
            inputs = self.tokenizer(sent_pair, is_pretokenized=True, padding=True, truncation=True, return_tensors="pt")
            outputs = self.emb_model(**inputs)[2][self.layer]
            return outputs[:, 1:-1, :]
        else:
            return None


class SentenceAligner(object):
    def __init__(self, model: str = "bert", token_type: str = "bpe", distortion: float = 0.0,
                 matching_methods: str = "mai", device: str = "cpu", layer: int = 8):
        model_names = {
            "bert": "bert-base-multilingual-cased",
            "xlmr": "xlm-roberta-base",
        }
        self.model = model_names.get(model, model)
        self.token_type = token_type
        self.distortion = distortion
        self.matching_methods = [m for m in matching_methods]
        self.device = torch.device(device)
        self.embed_loader = EmbeddingLoader(model=self.model, device=self.device, layer=layer)

    @staticmethod
    def get_max_weight_match(sim: np.ndarray) -> np.ndarray:
        forward = np.eye(sim.shape[1])[sim.argmax(axis=1)]
        backward = np.eye(sim.shape[0])[sim.argmax(axis=0)]
        return forward * backward.transpose()

    def get_word_aligns(self, src_sent: Union[str, List[str]], trg_sent: Union[str, List[str]]) -> Dict[str, List]:
        if isinstance(src_sent, str):
            src_sent = src_sent.split()
        if isinstance(trg_sent, str):
            trg_sent = trg_sent.split()
        l1_tokens = [self.embed_loader.tokenizer.tokenize(word) for word in src_sent]
        l2_tokens = [self.embed_loader.tokenizer.tokenize(word) for word in trg_sent]
        bpe_lists = [[bpe for w in sent for bpe in w] for sent in [l1_tokens, l2_tokens]]

        vectors = self.embed_loader.get_embed_list([src_sent, trg_sent]).cpu().detach().numpy()
        vectors = [vectors[i, :len(bpe_lists[i])] for i in [0, 1]]
        sim = cosine_similarity(vectors[0], vectors[1])

        aligns = {}
        if "m" in self.matching_methods:
            aligns["mwmf"] = self.get_max_weight_match(sim)
        return aligns
