from typing import Dict

import torch


def eval_metrics_from_batch(model: torch.nn.Module, seq_features: Dict[str, torch.Tensor],
                            target_ids: torch.Tensor, top_k: int = 200) -> Dict[str, torch.Tensor]:
    """Ranks every item for the user sequences of one batch and returns HR@k and NDCG@k per row."""
    user_embeddings = model(
        past_lengths=seq_features["past_lengths"],
        past_ids=seq_features["past_ids"],
        past_payloads=seq_features["past_payloads"],
    )
    item_embeddings = model.get_item_embeddings(model.all_item_ids)
    scores = user_embeddings @ item_embeddings.t()
    _, top_ids = scores.topk(top_k, dim=1)
    hits = (model.all_item_ids[top_ids] == target_ids.unsqueeze(1)).float()
    ranks = torch.arange(1, top_k + 1, device=hits.device, dtype=torch.float32)
    return {
        "hr@10": hits[:, :10].sum(dim=1),
        "ndcg@10": (hits[:, :10] / torch.log2(ranks[:10] + 1)).sum(dim=1),
    }
