from typing import Dict, Tuple

import torch

from .. import common
from . import rl_trainer


class PPOTrainer(rl_trainer.RLTrainer):

    @torch.inference_mode()
    def rollout(self, queries_data) -> Dict[str, torch.Tensor]:
        # Give up dropout throughout.
        self.policy.eval()
        unwrapped_policy = self.accelerator.unwrap_model(self.policy, keep_fp32_wrapper=True)
        self.ref_policy.eval()
        self.reward_model.eval()

        rollouts = []
        for batch in queries_data:
            queries, query_attn_masks = common.unpack_dict(
                common.prepare_inputs(batch, device=self.accelerator.device),
                keys=("queries", "query_attn_masks"))
            (responses,) = common.unpack_dict(
                unwrapped_policy.respond(queries, query_attn_masks, temperature=self.args.temperature),
                ("responses",))
            rollouts_batch = {"queries": queries, "query_attn_masks": query_attn_masks, "responses": responses}
            policy_outputs = self.policy(**rollouts_batch, temperature=self.args.temperature)
            ref_policy_outputs = self.ref_policy(**rollouts_batch, temperature=self.args.temperature)
            rollouts_batch.update({k: policy_outputs[k] for k in ("logprobs", "values")})
            rollouts_batch["ref_logprobs"] = ref_policy_outputs["logprobs"]
            rollouts_batch["rewards"] = self.reward_model(queries, responses)["rewards"]
            rollouts.append({key: value.cpu() for key, value in rollouts_batch.items()})
        rollouts = common.merge_dict(rollouts, merge_fn=torch.cat)
        advantages = rollouts["rewards"].unsqueeze(1) - rollouts["values"]
        rollouts["returns"] = advantages + rollouts["values"]
        rollouts["advantages"] = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        return rollouts

    def compute_loss(self, rollouts: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, Dict]:
        values, old_logprob, returns, advantages, queries, query_attn_masks, responses = common.prepare_inputs(
            common.unpack_dict(
                rollouts,
                keys=("values", "logprobs", "returns", "advantages", "queries", "query_attn_masks", "responses"),
            ),
            device=self.accelerator.device,
        )
        outputs = self.policy(queries, query_attn_masks, responses, temperature=self.args.temperature)

        vpred = outputs["values"]
        vpredclipped = torch.clamp(vpred, min=values - self.args.cliprange_value,
                                   max=values + self.args.cliprange_value)
        vf_loss = 0.5 * torch.maximum((vpred - returns) ** 2.0, (vpredclipped - returns) ** 2.0).mean()

        logprob = outputs["logprobs"]
        ratio = torch.exp(logprob - old_logprob)
        pg_losses = -advantages * ratio
        pg_losses2 = -advantages * torch.clamp(ratio, min=1.0 - self.args.cliprange, max=1.0 + self.args.cliprange)
        pg_loss = torch.maximum(pg_losses, pg_losses2).mean()

        loss = pg_loss + self.args.vf_coef * vf_loss
        stats = dict(loss=dict(policy=pg_loss, value=vf_loss, total=loss))
        return loss, common.flatten_dict(stats, sep="/", postprocess_fn=lambda x: x.detach())
