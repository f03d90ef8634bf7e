from dataclasses import dataclass
from typing import List, Optional, Union

import torch
import torch.nn as nn
from transformers import AutoConfig, AutoModelForSeq2SeqLM, GenerationConfig, PreTrainedModel

from .tokenizer import ChronosConfig, ChronosTokenizer


class ChronosModel(nn.Module):
    """A ``ChronosModel`` wraps a ``PreTrainedModel`` object from ``transformers``."""

    def __init__(self, config: ChronosConfig, model: PreTrainedModel) -> None:
        super().__init__()
        self.config = config
        self.model = model

    @property
    def device(self):
        return self.model.device

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        return self.model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    def forward(self, input_ids, attention_mask, prediction_length=None, num_samples=None,
                temperature=None, top_k=None, top_p=None) -> torch.Tensor:
        if prediction_length is None:
            prediction_length = self.config.prediction_length
        if num_samples is None:
            num_samples = self.config.num_samples
        preds = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            generation_config=GenerationConfig(
                min_new_tokens=prediction_length,
                max_new_tokens=prediction_length,
                do_sample=True,
                num_return_sequences=num_samples,
                eos_token_id=self.config.eos_token_id,
                pad_token_id=self.config.pad_token_id,
                temperature=temperature or self.config.temperature,
                top_k=top_k or self.config.top_k,
                top_p=top_p or self.config.top_p,
            ),
        )
        preds = preds[..., 1:]  # remove the decoder start token
        return preds.reshape(input_ids.size(0), num_samples, -1)


class ChronosPipeline:
    tokenizer: ChronosTokenizer
    model: ChronosModel

    def __init__(self, tokenizer, model):
        self.tokenizer = tokenizer
        self.model = model

    def _prepare_and_validate_context(self, context: Union[torch.Tensor, List[torch.Tensor]]):
        if isinstance(context, list):
            context = torch.nn.utils.rnn.pad_sequence(context, batch_first=True, padding_value=float("nan"))
        if context.ndim == 1:
            context = context.unsqueeze(0)
        return context

    @torch.no_grad()
    def embed(self, context):
        context_tensor = self._prepare_and_validate_context(context=context)
        token_ids, attention_mask, tokenizer_state = self.tokenizer.context_input_transform(context_tensor)
        embeddings = self.model.encode(input_ids=token_ids.to(self.model.device),
                                       attention_mask=attention_mask.to(self.model.device)).cpu()
        return embeddings, tokenizer_state

    def predict(self, context, prediction_length: Optional[int] = None, num_samples: Optional[int] = None,
                temperature=None, top_k=None, top_p=None, limit_prediction_length: bool = True) -> torch.Tensor:
        context_tensor = self._prepare_and_validate_context(context=context)
        if prediction_length is None:
            prediction_length = self.model.config.prediction_length
        predictions = []
        remaining = prediction_length
        while remaining > 0:
            token_ids, attention_mask, scale = self.tokenizer.context_input_transform(context_tensor)
            samples = self.model(
                token_ids.to(self.model.device),
                attention_mask.to(self.model.device),
                min(remaining, self.model.config.prediction_length),
                num_samples, temperature, top_k, top_p,
            )
            prediction = self.tokenizer.output_transform(samples.to(scale.device), scale)
            predictions.append(prediction)
            remaining -= prediction.shape[-1]
            if remaining <= 0:
                break
            context_tensor = torch.cat([context_tensor, prediction.median(dim=1).values], dim=-1)
        return torch.cat(predictions, dim=-1)

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        config = AutoConfig.from_pretrained(*args, **kwargs)
        chronos_config = ChronosConfig(**config.chronos_config)
        inner_model = AutoModelForSeq2SeqLM.from_pretrained(*args, **kwargs)
        inner_model.eval()
        return cls(tokenizer=chronos_config.create_tokenizer(),
                   model=ChronosModel(config=chronos_config, model=inner_model))
