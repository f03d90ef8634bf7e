"""Reduced model runner: runs a batch and reports the per-stage timings to the server."""
import logging

import torch

from pymllm.models.qwen3 import Qwen3ForCausalLM

logger = logging.getLogger(__name__)


class ModelRunner:
    def __init__(self, config, device: str = "cuda") -> None:
        self.device = torch.device(device)
        self.model = Qwen3ForCausalLM(config).to(self.device).eval()

    def forward(self, forward_batch):
        input_ids = forward_batch.input_ids.to(self.device, non_blocking=True)
        positions = forward_batch.positions.to(self.device, non_blocking=True)
        output = self.model(input_ids, positions, forward_batch)
        if forward_batch.llm_prefill_ms is not None:
            logger.info("prefill %.2f ms", forward_batch.llm_prefill_ms)
        else:
            logger.info("decode %.2f ms", forward_batch.llm_decode_ms)
        return output
