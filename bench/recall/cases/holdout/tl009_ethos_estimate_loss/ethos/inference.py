import torch

from ethos.model import GPT2LMNoBiasModel


def load_model(path, vocab_size, block_size, device="cuda"):
    checkpoint = torch.load(path, map_location=device)
    model = GPT2LMNoBiasModel(vocab_size, block_size)
    model.load_state_dict(checkpoint["model"])
    return model.to(device)


@torch.inference_mode()
def generate_timeline(model, idx, max_new_tokens, stop_tokens, temperature=1.0):
    for _ in range(max_new_tokens):
        logits, _ = model(idx)
        probs = torch.softmax(logits[:, -1, :] / temperature, dim=-1)
        next_token = torch.multinomial(probs, num_samples=1)
        idx = torch.cat((idx, next_token), dim=1)
        if next_token.item() in stop_tokens:
            break
    return idx


def run_inference(checkpoint, vocab_size, block_size, prompts, stop_tokens, rep_num=20):
    model = load_model(checkpoint, vocab_size, block_size)
    results = []
    for prompt in prompts:
        for _ in range(rep_num):
            results.append(generate_timeline(model, prompt.to("cuda"), 1000, stop_tokens))
    return results
