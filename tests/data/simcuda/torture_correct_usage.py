"""Correct CUDA usage that must run clean on simulated CUDA: every case is valid on a real
GPU, so any exception is a false alarm or a crash of the simulator. Prints one line per
failing case and a final `TORTURE <n> failures` line. (Adapted from the research
prototype's torture suite; numpy parts run only where numpy is installed.)"""

import copy
import io
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import numpy as np
except ImportError:
    np = None

warnings.filterwarnings("ignore")
dev = torch.device("cuda")
failures = []
x = torch.randn(8, 16, device=dev)


def case(name):
    def run(func):
        try:
            func()
        except BaseException as error:  # noqa: BLE001 - every failure is reported
            failures.append(name)
            first = str(error).splitlines()[0][:160] if str(error) else ""
            print(f"FAILED {name}: {type(error).__name__}: {first}")
        return func

    return run


@case("cpu 0-dim tensors in pointwise, clamp, where, lerp, masked_fill")
def _():
    s = torch.tensor(0.5)
    (x * s + s).clamp(min=torch.tensor(-1.0), max=torch.tensor(1.0))
    torch.where(x > 0, x, torch.tensor(0.0))
    torch.lerp(x, x, s)
    x.masked_fill(x > 0, torch.tensor(0.0))
    x.clone().masked_fill_(x > 0, float("-inf"))


@case("cpu long and bool indices, setitem with cpu indices")
def _():
    y = x.clone()
    y[torch.tensor([0, 2])]
    y[torch.tensor([True] * 4 + [False] * 4)]
    y[torch.arange(3)] = 0.0
    y[:, 0] = torch.ones(8, device=dev)


@case("gather, scatter, index_add, topk, sort, unique, bincount, multinomial")
def _():
    i = torch.randint(0, 16, (8, 4), device=dev)
    x.gather(1, i)
    torch.zeros(8, 16, device=dev).scatter_(1, i, 1.0)
    torch.zeros(16, device=dev).index_add_(0, i[:, 0], torch.ones(8, device=dev))
    x.topk(3)
    x.sort()
    torch.unique(i)
    torch.bincount(i.flatten())
    torch.multinomial(F.softmax(x, -1), 2)


@case("cat, stack, pad, interpolate, one_hot, einsum, bmm, cdist")
def _():
    torch.cat([x, x])
    torch.stack([x, x])
    F.pad(x, (1, 1))
    F.interpolate(x[None], scale_factor=2)
    F.one_hot(torch.arange(4, device=dev), 5)
    torch.einsum("ij,kj->ik", x, x)
    torch.bmm(x[None], x.T[None])
    torch.cdist(x, x)


@case("losses: weights, label smoothing, pos_weight, kl_div")
def _():
    y = torch.randint(0, 16, (8,), device=dev)
    F.cross_entropy(x, y, weight=torch.ones(16, device=dev), label_smoothing=0.1)
    F.binary_cross_entropy_with_logits(x, torch.rand_like(x), pos_weight=torch.ones(16, device=dev))
    F.kl_div(F.log_softmax(x, -1), F.softmax(x, -1), reduction="batchmean")


@case("ctc_loss with CPU targets and CPU length tensors")
def _():
    log_probs = torch.randn(20, 2, 6, device=dev).log_softmax(2).requires_grad_()
    targets = torch.randint(1, 6, (2, 5))
    lengths = torch.full((2,), 20, dtype=torch.long), torch.full((2,), 5, dtype=torch.long)
    F.ctc_loss(log_probs, targets, *lengths).backward()


@case("packed LSTM with CPU lengths, GRU with a hidden state on the device")
def _():
    lstm = nn.LSTM(16, 8, batch_first=True).to(dev)
    seq = torch.randn(3, 5, 16, device=dev)
    packed = nn.utils.rnn.pack_padded_sequence(seq, torch.tensor([5, 3, 2]), batch_first=True)
    out, _ = lstm(packed)
    nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    gru = nn.GRU(16, 8).to(dev)
    gru(seq.transpose(0, 1), torch.zeros(1, 3, 8, device=dev))[0].sum().backward()


@case("MultiheadAttention with masks, SDPA, TransformerDecoderLayer")
def _():
    mha = nn.MultiheadAttention(16, 4, batch_first=True).to(dev)
    q = torch.randn(2, 5, 16, device=dev)
    mask = torch.zeros(2, 5, dtype=torch.bool, device=dev)
    mha(q, q, q, key_padding_mask=mask, attn_mask=torch.zeros(5, 5, device=dev))[0].sum().backward()
    F.scaled_dot_product_attention(q, q, q, is_causal=True)
    nn.TransformerDecoderLayer(16, 4, 32, batch_first=True).to(dev)(q, q).sum().backward()


@case("EmbeddingBag with offsets, padding_idx, weight_norm, spectral_norm")
def _():
    bag = nn.EmbeddingBag(10, 4, mode="mean").to(dev)
    bag(torch.tensor([1, 2, 4, 5], device=dev), torch.tensor([0, 2], device=dev)).sum().backward()
    nn.Embedding(10, 4, padding_idx=0).to(dev)(torch.tensor([[0, 1]], device=dev)).sum().backward()
    nn.utils.parametrizations.weight_norm(nn.Linear(4, 4)).to(dev)(torch.randn(2, 4, device=dev)).sum().backward()
    nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4)).to(dev)(torch.randn(2, 4, device=dev)).sum().backward()


@case("host conversions: item, float, int, bool, tolist, len, repr, format, cpu()")
def _():
    s = x.sum()
    float(s), int(s > 0), bool(s > -1e9), x.tolist(), len(x), repr(x), str(x[0]), f"{s:.3f}"
    assert x.cpu().device.type == "cpu"
    if np is not None:
        x.cpu().numpy()
        np.asarray(x.cpu())


@case("moves: to(other), type_as, new_*, zeros_like(device=cpu), as_tensor(device=), channels_last")
def _():
    assert torch.ones(3).to(x).is_cuda and torch.ones(3).type_as(x).is_cuda
    assert x.new_zeros(3).is_cuda and x.new_tensor([1.0]).is_cuda and x.new_full((2,), 1.0).is_cuda
    assert not torch.zeros_like(x, device="cpu").is_cuda
    assert torch.as_tensor([1.0, 2.0], device="cuda").is_cuda
    assert torch.ones(3).cuda(non_blocking=True).is_cuda
    assert x.to(dev, torch.float16).dtype == torch.float16
    conv = nn.Conv2d(3, 4, 3).to(dev, memory_format=torch.channels_last)
    conv(torch.randn(1, 3, 8, 8, device=dev).to(memory_format=torch.channels_last))
    assert x.to("cpu").device.type == "cpu" and x.to(torch.device("cuda:0")) is x and x.cuda() is x
    assert x.double().is_cuda and x.type() == "torch.cuda.FloatTensor"


@case("checkpoints: state_dict cuda -> cpu -> cuda, whole-module save, optimizer state to cuda")
def _():
    gpu_model = nn.Linear(4, 4).to(dev)
    cpu_model = nn.Linear(4, 4)
    cpu_model.load_state_dict(gpu_model.state_dict())
    gpu_model.load_state_dict(cpu_model.state_dict())
    buffer = io.BytesIO()
    torch.save(gpu_model, buffer)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=False).weight.is_cuda
    optimizer = torch.optim.AdamW(gpu_model.parameters())
    gpu_model(torch.randn(2, 4, device=dev)).sum().backward()
    optimizer.step()
    buffer = io.BytesIO()
    torch.save({"model": gpu_model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    on_cpu = torch.load(buffer, map_location="cpu")
    assert not on_cpu["model"]["weight"].is_cuda
    buffer.seek(0)
    on_gpu = torch.load(buffer, map_location=dev)
    assert on_gpu["model"]["weight"].is_cuda
    optimizer.load_state_dict(on_cpu["optimizer"])
    optimizer.zero_grad()
    gpu_model(torch.randn(2, 4, device=dev)).sum().backward()
    optimizer.step()


@case("EMA with foreach ops, clip_grad_value_, ReduceLROnPlateau with a cuda loss, warm restarts")
def _():
    model = nn.Linear(4, 4).to(dev)
    ema = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4, device=dev)).sum().backward()
    nn.utils.clip_grad_value_(model.parameters(), 1.0)
    optimizer.step()
    torch._foreach_mul_(ema, 0.99)
    torch._foreach_add_(ema, [p.detach() for p in model.parameters()], alpha=0.01)
    torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer).step(torch.tensor(1.0, device=dev))
    torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 2).step()


@case("distributions, dropout, randperm/randint on the device, seeds, Generator(device='cuda')")
def _():
    categorical = torch.distributions.Categorical(logits=x)
    categorical.log_prob(categorical.sample())
    torch.distributions.Normal(x, 1.0).rsample()
    F.dropout(x, 0.5)
    torch.randperm(10, device=dev)
    torch.randint(0, 5, (3,), device=dev)
    torch.manual_seed(0)
    torch.cuda.manual_seed(0)
    generator = torch.Generator(device="cuda")
    generator.manual_seed(0)
    torch.randn(3, device=dev, generator=generator)


@case("streams, events, record_stream, nvtx, device context, memory API")
def _():
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = x * 2
    torch.cuda.current_stream().wait_stream(side)
    y.record_stream(torch.cuda.current_stream())
    with torch.cuda.device(0):
        torch.cuda.set_device(0)
    torch.cuda.nvtx.range_push("a")
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() <= torch.cuda.memory_reserved()
    torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.get_device_name(0)
    assert torch.cuda.get_device_properties(0).total_memory > 0
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    x @ x.T
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0


@case("AMP: float16 autocast, GradScaler, custom_fwd Function, disabled region, torch.cuda.amp aliases")
def _():
    class Square(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @torch.amp.custom_bwd(device_type="cuda")
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return 2 * a * grad

    model = nn.Linear(16, 16).to(dev)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast():
        h = model(x)
        assert h.dtype == torch.float16
        with torch.autocast("cuda", enabled=False):
            h2 = h.float() @ torch.ones(16, 16, device=dev)
            assert h2.dtype == torch.float32
        loss = Square.apply(h).mean() + h2.mean()
        assert F.softmax(h, -1).dtype == torch.float32
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    assert scaler.get_scale() > 1.0


@case("bf16 autocast, fused Adam, activation checkpointing")
def _():
    from torch.utils.checkpoint import checkpoint

    block = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)).to(dev)
    optimizer = torch.optim.Adam(block.parameters(), fused=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = checkpoint(block, x, use_reentrant=False)
        assert out.dtype == torch.bfloat16
    out.float().sum().backward()
    optimizer.step()


@case("DataLoader with 2 workers, pin_memory, persistent workers, non_blocking moves")
def _():
    data = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.arange(32))
    loader = torch.utils.data.DataLoader(data, batch_size=8, num_workers=2, pin_memory=True, persistent_workers=True)
    for a, b in loader:
        a, b = a.to(dev, non_blocking=True), b.cuda(non_blocking=True)
        (a.sum() + b.sum()).item()


@case("module utilities: half(), apply(init), parameters_to_vector, deepcopy, zero_grad")
def _():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).to(dev)
    model.apply(lambda m: nn.init.xavier_uniform_(m.weight) if isinstance(m, nn.Linear) else None)
    vector = nn.utils.parameters_to_vector(model.parameters())
    nn.utils.vector_to_parameters(vector * 0.5, model.parameters())
    assert next(copy.deepcopy(model).parameters()).is_cuda
    model.half()(torch.randn(3, 4, device=dev, dtype=torch.half))
    model.float()
    model.zero_grad()


@case("retain_graph, autograd.grad, create_graph (gradient penalty)")
def _():
    model = nn.Linear(4, 1).to(dev)
    inputs = torch.randn(5, 4, device=dev, requires_grad=True)
    (grad,) = torch.autograd.grad(model(inputs).sum(), inputs, create_graph=True)
    (grad.norm(2, dim=1) - 1).pow(2).mean().backward()
    y = model(inputs).sum()
    y.backward(retain_graph=True)
    y.backward()


print(f"TORTURE {len(failures)} failures")
