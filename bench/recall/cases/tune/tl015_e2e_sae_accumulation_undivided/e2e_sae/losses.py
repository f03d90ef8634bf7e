import torch
import torch.nn.functional as F


def calc_sparsity_loss(c: torch.Tensor, p_norm: float = 1.0) -> torch.Tensor:
    """L_p sparsity of the SAE activations, averaged over the batch and positions."""
    return torch.norm(c, p=p_norm, dim=-1).mean()


def calc_kl_loss(new_logits: torch.Tensor, orig_logits: torch.Tensor) -> torch.Tensor:
    """KL divergence between the original model's and the SAE-patched model's next-token distributions."""
    return F.kl_div(F.log_softmax(new_logits, dim=-1), F.log_softmax(orig_logits, dim=-1),
                    log_target=True, reduction="batchmean")


def calc_loss(orig_logits, new_logits, orig_acts, sae_acts, loss_configs):
    """Weighted sum of the configured losses (each a mean over the batch)."""
    loss = torch.zeros((), device=new_logits.device)
    loss_dict = {}
    if loss_configs.get("logits_kl"):
        kl = calc_kl_loss(new_logits, orig_logits)
        loss = loss + loss_configs["logits_kl"] * kl
        loss_dict["loss/logits_kl"] = kl.detach()
    for name, sae_act in sae_acts.items():
        if loss_configs.get("sparsity"):
            sparsity = calc_sparsity_loss(sae_act["c"], loss_configs.get("p_norm", 1.0))
            loss = loss + loss_configs["sparsity"] * sparsity
            loss_dict[f"loss/sparsity/{name}"] = sparsity.detach()
        if loss_configs.get("in_to_orig"):
            mse = F.mse_loss(sae_act["output"], orig_acts[name])
            loss = loss + loss_configs["in_to_orig"] * mse
            loss_dict[f"loss/in_to_orig/{name}"] = mse.detach()
    return loss, loss_dict
