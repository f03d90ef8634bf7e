import torch

from joeynmt.helpers import load_checkpoint
from joeynmt.search import search


def predict(model, data, device, compute_loss=False, normalization="batch", batch_size=10, batch_type="sentence",
            num_workers=0, max_output_length=100):
    """Generates translations for the given data; if compute_loss, also the validation loss and perplexity."""
    valid_iter = data.make_iter(batch_size=batch_size, batch_type=batch_type, shuffle=False,
                                num_workers=num_workers, device=device)

    # disable dropout
    model.eval()

    all_outputs = []
    total_loss = 0
    total_nseqs = 0
    total_ntokens = 0
    for batch in valid_iter:
        if batch.nseqs < 1:
            continue
        with torch.no_grad():
            if compute_loss:
                batch_loss, _, _, _ = model(return_type="loss", **vars(batch))
                total_loss += batch_loss.item()
                total_ntokens += batch.ntokens
                total_nseqs += batch.nseqs
            output, _, _ = search(batch=batch, model=model, max_output_length=max_output_length)
        all_outputs.extend(output)

    valid_scores = {}
    if compute_loss and total_ntokens > 0:
        valid_scores["loss"] = total_loss / (total_nseqs if normalization == "batch" else total_ntokens)
        valid_scores["ppl"] = torch.exp(torch.tensor(total_loss / total_ntokens)).item()
    return valid_scores, all_outputs
