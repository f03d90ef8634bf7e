"""Sentiment analysis server: DistilBERT behind mosec with dynamic batching."""

import logging
from typing import Any, List

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from mosec import Server, Worker

logger = logging.getLogger()
logger.setLevel(logging.DEBUG)

INFERENCE_BATCH_SIZE = 32


class Preprocess(Worker):
    def __init__(self):
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased-finetuned-sst-2-english")

    def deserialize(self, data: bytes) -> str:
        return data.decode()

    def forward(self, data: str) -> Any:
        tokens = self.tokenizer.encode(data, add_special_tokens=True)
        return tokens


class Inference(Worker):
    def __init__(self):
        super().__init__()
        self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        logger.info("using computing device: %s", self.device)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            "distilbert-base-uncased-finetuned-sst-2-english")
        self.model.eval()
        self.model.to(self.device)

        # overwrite self.example for warmup
        self.example = [[101, 2023, 2003, 1037, 7099, 102]] * INFERENCE_BATCH_SIZE

    def deserialize(self, data: bytes) -> str:
        return data.decode()

    def forward(self, data: List[Any]) -> List[str]:
        tensors = [torch.tensor(token) for token in data]
        with torch.no_grad():
            result = self.model(
                torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True)
            )[0]
        scores = result.softmax(dim=1).cpu().tolist()
        return [f"positive={p}" for (_, p) in scores]

    def serialize(self, data: str) -> bytes:
        return data.encode()


if __name__ == "__main__":
    server = Server()
    server.append_worker(Preprocess, num=2)
    server.append_worker(Inference, max_batch_size=INFERENCE_BATCH_SIZE)
    server.run()
