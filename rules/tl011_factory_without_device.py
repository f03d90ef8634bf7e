from __future__ import annotations

from enum import Enum
from typing import Iterable, Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an

FACTORIES = frozenset(
    f"torch.{name}"
    for name in "zeros ones empty full arange rand randn randint randperm eye tensor linspace logspace".split()
)
# Methods that put their receiver where the model is.
MOVES = frozenset({"to", "cuda", "type_as"})
# Methods and builtins that bring a value back to the host: the tensor never meets the model.
HOST_READS = frozenset({"item", "tolist", "numpy", "cpu"})
HOST_BUILTINS = frozenset({"float", "int", "bool", "len", "list", "tuple", "range", "str"})
# Wrapping a tensor in these registers it with the module, which `.to(device)` moves.
REGISTERS = frozenset({"register_buffer", "Parameter", "register_parameter"})
DTYPES = frozenset(
    """float float32 float16 float64 half double bfloat16 long int int64 int32 int16 int8 uint8
    bool complex64 complex128 cfloat cdouble""".split()
)
# Reading these from a tensor gives host values (or a device), never device data.
METADATA = frozenset({"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad"})
METADATA_CALLS = frozenset({"size", "dim", "numel", "nelement", "element_size", "get_device", "stride", "is_contiguous"})
# Methods that `self.<name>(...)` may call without being a submodule.
SELF_HELPERS = frozenset({"register_buffer", "register_parameter", "parameters", "buffers", "modules", "children"})
# Methods of a tensor whose arguments are sizes, dims or scalars, never other tensors.
SCALAR_ARG_METHODS = frozenset(
    """view reshape repeat expand unsqueeze squeeze permute transpose flatten unflatten float long int
    half double bool byte contiguous clone detach flip roll narrow split chunk sum mean prod cumsum
    cumprod clamp clamp_ tril triu tril_ triu_ repeat_interleave uniform_ normal_ fill_ random_
    exponential_ bernoulli_ zero_ exp log sqrt abs neg sin cos softmax argmax argmin topk sort unbind
    movedim""".split()
)
SHAPED = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})
# Factories whose result is always one-dimensional.
ONE_DIMENSIONAL = frozenset({"arange", "linspace", "logspace", "randperm"})
# Reductions that, called without arguments, give a 0-dim tensor (which mixes with CUDA tensors).
REDUCTIONS = frozenset("sum mean max min prod norm any all std var median amax amin".split())
# Methods that keep a tensor's shape: an element of the result is still a scalar.
ELEMENTWISE = frozenset("float long int half double bool clamp abs neg exp log sqrt".split())
MAX_FLOW = 5
# LightningModule hooks that Lightning runs on the module's device with the batch moved there.
LIGHTNING_STEPS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})


class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Finds tensor factories (`torch.zeros`, `ones`, `empty`, `full`, `arange`, `rand`, `randn`,
    `randint`, `randperm`, `eye`, `tensor`, `linspace`, `logspace`) called without `device=`
    inside an `nn.Module`'s `forward` (or a method that `forward` calls through `self`), or
    in a LightningModule's `training_step` / `validation_step` / `test_step` / `predict_step`,
    in a file that runs models on a device (or defines a LightningModule, which the Trainer
    places on its accelerator), when nothing moves the new tensor to the input's device
    afterwards.

    ## Why is this bad?
    A factory without `device=` allocates on the CPU. The module works in CPU tests and
    fails with "Expected all tensors to be on the same device" as soon as it runs on a GPU;
    worse, a buffer returned as output can silently drag the rest of the computation back
    to the CPU. `.to(device)` on the model moves parameters and buffers, never tensors
    created inside `forward`.

    ## Example
    ```python
    class PositionalEncoding(nn.Module):
        def forward(self, x):
            positions = torch.arange(x.size(1))
            return x + self.embedding(positions)
    ```

    ## Use instead
    ```python
    class PositionalEncoding(nn.Module):
        def forward(self, x):
            positions = torch.arange(x.size(1), device=x.device)
            return x + self.embedding(positions)
    ```
    or `x.new_zeros(...)`, `torch.zeros_like(x)`, or a buffer registered in `__init__`.
    Zero-dimensional tensors (`torch.tensor(1.0)`, `torch.randint(a, b, (1,))[0]`, an element
    of a one-dimensional factory, a `t.max()`) are not reported: PyTorch lets a 0-dim CPU
    tensor take part in CUDA operations. Neither are tensors used only as indices
    (`x[torch.arange(n)]`), as sizes of other factories, as CTC targets, or read back on the
    host (`torch.randint(...).item()`); nor tensors kept on the host on purpose: created in a
    branch chosen by the device (`if x.is_cuda:`), stored in a name that says so (`x_host`),
    or computed by a helper whose result the caller moves. Test files are not checked.

    ## Fix safety
    The fix adds `device=x.device`, where `x` is `forward`'s first argument. It is unsafe:
    that argument may not be a tensor, or not the one whose device the result should follow.

    ## Runtime confirmation
    On a GPU, `torchlint probe` confirms it as TL101 device-mismatch.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#best-practices
    - https://pytorch.org/docs/stable/tensor_attributes.html#torch.device
    """

    CODE = "TL011"
    NAME = "factory-without-device"
    SUMMARY = "Tensor factory in `forward` without `device=` creates a CPU tensor"
    SEVERITY = Severity.WARNING
    TRIGGERS = (
        ("forward",),
        ("cuda", "device", "LightningModule"),
        ("zeros", "ones", "empty", "full", "arange", "rand", "eye", "tensor", "linspace", "logspace"),
    )
    CONFIRMED_BY = ("TL101",)

    VALID = [
        # device= of an input.
        """
        import torch
        from torch import nn
        class Pos(nn.Module):
            def forward(self, x):
                pos = torch.arange(x.size(1), device=x.device)
                return x + self.emb(pos)
        model = Pos().cuda()
        """,
        # *_like and new_* factories inherit the device.
        """
        import torch
        import torch.nn as nn
        class Noise(nn.Module):
            def forward(self, x):
                mask = torch.ones_like(x)
                pad = x.new_zeros(x.size(0), 1)
                return torch.cat([x * mask, pad], dim=1)
        device = torch.device("cuda")
        """,
        # Moved right away, or later through a variable (the diffusers timestep embedding).
        """
        import math, torch
        from torch import nn
        class TimestepEmbedding(nn.Module):
            def forward(self, timesteps):
                half = self.dim // 2
                exponent = -math.log(10000) * torch.arange(half, dtype=torch.float32)
                emb = torch.exp(exponent / half).to(timesteps.device)
                mask = torch.triu(torch.ones(half, half)).cuda()
                scale = torch.rand(half)
                scale = scale.type_as(emb)
                return emb * scale
        """,
        # Zero-dimensional tensors mix with CUDA tensors.
        """
        import torch
        from torch import nn
        class Clamp(nn.Module):
            def forward(self, x):
                neg = torch.tensor(float("-inf"))
                return torch.where(x > 0, x, neg) * torch.tensor(0.5) + torch.zeros(())
        model = Clamp().to("cuda")
        """,
        # Used only as an index or read on the host (torchvision transforms).
        """
        import torch
        from torch import nn
        class RandomFlip(nn.Module):
            def forward(self, img):
                if torch.rand(1) < self.p:
                    img = img.flip(-1)
                i = torch.randint(0, 10, size=(1,)).item()
                idx = torch.randperm(img.size(0))
                return img[idx][torch.arange(img.size(0)) % 2 == 0], i
        x = x.cuda()
        """,
        # Buffers registered in __init__ move with the model.
        """
        import torch
        from torch import nn
        class Rotary(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))

            def forward(self, x):
                t = torch.arange(x.shape[1]).type_as(self.inv_freq)
                return torch.outer(t, self.inv_freq)
        model = Rotary(64).to(device)
        """,
        # A CPU-only file: nothing says the model runs on a GPU.
        """
        import torch
        from torch import nn
        class Net(nn.Module):
            def forward(self, x):
                return x + torch.zeros(x.size(1))
        """,
        # Not a module: autograd Functions and plain classes.
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * torch.ones(x.size(1))

        class Collator:
            def forward(self, items):
                return torch.tensor([len(i) for i in items])
        device = "cuda"
        """,
        # The factory lives outside forward (an init_hidden called by the training loop).
        """
        import torch
        from torch import nn
        class RNN(nn.Module):
            def init_hidden(self, bsz):
                return torch.zeros(self.nlayers, bsz, self.nhid)

            def forward(self, x, hidden):
                return self.rnn(x, hidden)
        hidden = model.init_hidden(32).to(device)
        """,
        # A helper that forward calls returns the tensor, and forward moves it.
        """
        import torch
        from torch import nn
        class Seq2Seq(nn.Module):
            def make_outputs(self, n, b):
                return torch.zeros(n, b, self.vocab)

            def forward(self, src):
                outputs = self.make_outputs(src.size(0), src.size(1)).to(self.device)
                return outputs
        """,
        # A default device set for the whole file.
        """
        import torch
        from torch import nn
        torch.set_default_device("cuda")
        class Net(nn.Module):
            def forward(self, x):
                return x + torch.randn(x.shape[-1])
        """,
        # torch.tensor of a tensor or of unknown data keeps its device or is a scalar.
        """
        import torch
        from torch import nn
        class Scaler(nn.Module):
            def forward(self, x, scale):
                return x * torch.tensor(scale) + torch.tensor(self.bias)
        model.cuda()
        """,
        # out= and **kwargs decide the device elsewhere.
        """
        import torch
        from torch import nn
        class Buf(nn.Module):
            def forward(self, x, **factory_kwargs):
                y = torch.empty(x.shape, **factory_kwargs)
                torch.zeros(x.shape, out=self.buffer)
                return y
        device = torch.device("cuda")
        """,
        # Random parameters drawn on the host (torchvision's get_params), and a tensor handed to
        # another library's function, which may place it itself.
        """
        import torch
        import torchvision.transforms.functional as TF
        class RandomResizedCrop(torch.nn.Module):
            @staticmethod
            def get_params(img, scale: list[float]):
                area = img.shape[-1] * img.shape[-2]
                target = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
                jitter = float(torch.empty(1).uniform_(0.5, 1.5))
                return int(target), jitter

            def forward(self, img):
                target, jitter = self.get_params(img, self.scale)
                displacement = torch.rand(1, 8, 8, 2)
                return TF.elastic_transform(img[..., :target] * jitter, displacement)
        device = "cuda"
        """,
        # Rotary tables computed only from factories and returned (diffusers moves them where
        # they are applied).
        """
        import torch
        from torch import nn
        class RotaryPosEmbed(nn.Module):
            def forward(self, hidden_states):
                h = hidden_states.shape[2]
                inv_freq = 1.0 / (self.theta ** (torch.arange(0, self.dim, 2, dtype=torch.float32) / self.dim))
                freqs = torch.outer(torch.arange(h), inv_freq)
                return freqs.cos(), freqs.sin()
        model.to("cuda")
        """,
        # A CPU table filled from other CPU tensors and moved when returned (timm's ConViT);
        # empty placeholders; a CPU tensor filled with device values but read on the host.
        """
        import torch
        from torch import nn
        class GPSA(nn.Module):
            def get_rel_indices(self, n):
                rel = torch.zeros(1, n, n, 3)
                ind = torch.arange(n).view(1, -1) - torch.arange(n).view(-1, 1)
                rel[:, :, :, 0] = ind.unsqueeze(0)
                return rel.to(self.qk.weight.device)

            def forward(self, x, counts):
                self.rel_indices = self.get_rel_indices(x.shape[1])
                out = self.attn(x, torch.empty([0]), torch.tensor([], dtype=torch.long))
                offsets = torch.empty(counts.size(), dtype=counts.dtype)
                offsets[1:] = counts.cumsum(0)[:-1]
                return [out[s:] for s in offsets.tolist()]
        device = torch.device("cuda")
        """,
        # `.to(device=...)` after a dtype cast in the chain.
        """
        import torch
        from torch import nn
        class Mask(nn.Module):
            def forward(self, x):
                mask = torch.ones(x.size(1), x.size(1)).tril().bool().to(device=x.device)
                return x.masked_fill(~mask, 0.0)
        """,
        # A branch chosen by the input's device: each branch places its tensor (composer's
        # gyro dropout).
        """
        import torch
        from torch import nn
        class GyroDropout(nn.Module):
            def forward(self, x):
                on_gpu = x.is_cuda
                if on_gpu:
                    self.masks = (torch.rand(self.sigma, x.shape[1]) > self.p).float().to("cuda")
                else:
                    self.masks = (torch.rand(self.sigma, x.shape[1]) > self.p).float()
                return x * self.masks[: x.shape[0]]
        """,
        # Random sizes and bounds drawn on the host: 0-dim elements used as slice bounds and
        # sizes, reductions to 0-dim, sizes of other factories (speechbrain's augmentations).
        """
        import torch
        from torch import nn
        class Warp(nn.Module):
            def forward(self, spec, lengths):
                c = torch.randint(self.window, spec.shape[2] - self.window, (1,))[0]
                left = nn.functional.interpolate(spec[:, :, :c], (c + 1, spec.shape[3]))
                change = 1.0 + torch.rand(2) * self.factor
                spec = spec * change[0] + change[1]
                drops = torch.randint(1, 4, size=(spec.size(0),))
                for i in range(spec.size(0)):
                    length = torch.randint(1, 10, size=(drops[i],))
                    end = max(0, lengths[i] - length.max())
                    noise = torch.rand(length[0], device=spec.device)
                    spec[i, end : end + length[0]] = noise
                return torch.cat([left, spec], dim=2)
        device = "cuda"
        """,
        # Host-side work kept on the CPU on purpose, and a table built in one branch of a test
        # and used only in the opposite branch of the same test (kornia's RANSAC).
        """
        import torch
        from torch import nn
        class Ransac(nn.Module):
            def forward(self, kp1, kp2):
                kp1_host = torch.zeros(len(kp1), 3)
                kp1_host[:, :2] = kp1.cpu()
                if self.essential:
                    t1 = torch.eye(3, dtype=torch.float64)
                else:
                    t1 = self.normalizer(kp1_host)
                model = self.fit(kp1, kp2)
                if self.essential:
                    model = model / model.norm()
                else:
                    model = model @ t1
                return model
        device = torch.device("cuda")
        """,
        # An uninitialized one-element placeholder that a kernel ignores (DeepSpeed's "no mask").
        """
        import torch
        from torch import nn
        class Attention(nn.Module):
            def forward(self, qkv, mask=None):
                no_masking = mask is None
                if no_masking:
                    mask = torch.empty(1)
                return self.score_context(qkv, mask, no_masking=no_masking, bias=torch.empty(1))
        model.cuda()
        """,
        # CTC losses take CPU targets and lengths (FastSpeech2's alignment loss).
        """
        import torch
        from torch import nn
        class ForwardSumLoss(nn.Module):
            def forward(self, logprob, key_lens, query_lens):
                total = 0.0
                for b in range(logprob.shape[0]):
                    target = torch.arange(1, key_lens[b] + 1).unsqueeze(0)
                    total = total + self.ctc_loss(logprob[b], target, query_lens[b : b + 1], key_lens[b : b + 1])
                return total
        device = "cuda"
        """,
        # Computed on the CPU by a helper, and the result moved where it is used (LongT5's
        # side bias).
        """
        import torch
        from torch import nn
        class Attention(nn.Module):
            def side_bias(self, mask, segment_ids):
                return torch.eq(mask[..., None], segment_ids[:, None, :])

            def forward(self, hidden, scores, segment_ids, mask=None):
                if mask is None:
                    mask = torch.ones(hidden.shape[0], hidden.shape[1])
                bias = self.side_bias(mask, segment_ids)
                bias = bias.type(scores.dtype).to(scores.device)
                return scores + bias
        model.cuda()
        """,
        # A helper branch that forward's call never takes: `shape` is not passed (torchrl's
        # consistent dropout, whose shape branch serves an environment primer).
        """
        import torch
        import torch.nn.functional as F
        from torch import nn
        class ConsistentDropout(nn.Module):
            def forward(self, x):
                mask = self.make_mask(input=x)
                return x * mask, mask

            def make_mask(self, *, input=None, shape=None):
                if input is not None:
                    return F.dropout(torch.ones_like(input), self.p, self.training)
                elif shape is not None:
                    return F.dropout(torch.ones(shape), self.p, self.training)
                raise RuntimeError("input or shape must be passed")
        device = "cuda"
        """,
        # Indices written into a slice of an input-derived tensor are not device data
        # (`out[i, start[j]:end[j]] = ...` binds no name), nor is a scaled arange moved later
        # (fairseq's beam offsets).
        """
        import torch
        from torch import nn
        class Drop(nn.Module):
            def forward(self, wav, tokens):
                out = wav.clone()
                start = torch.randint(0, 10, size=(4,))
                length = torch.randint(1, 5, size=(4,))
                end = start + length
                for i in range(wav.size(0)):
                    for j in range(4):
                        out[i, start[j] : end[j]] = wav[i, start[j] : end[j]] * self.gain
                offsets = (torch.arange(0, wav.size(0)) * self.beam).unsqueeze(1).type_as(tokens).to(wav.device)
                return out + offsets
        device = "cuda"
        """,
        # A LightningModule's step that places its noise (Lightning's GAN example) or uses
        # `self.device`; `batch_idx` is a host integer.
        """
        import torch
        import lightning as L
        class GAN(L.LightningModule):
            def training_step(self, batch, batch_idx):
                imgs, _ = batch
                z = torch.randn(imgs.shape[0], self.latent_dim)
                z = z.type_as(imgs)
                eps = torch.rand(imgs.shape[0], 1, 1, 1, device=self.device)
                offset = torch.arange(4) + batch_idx
                return self.loss(self(z), imgs * eps, offset.tolist())
        """,
        # `.type()` with a tensor type chosen by the input's device, or read from the input.
        """
        import torch
        import torch.nn as nn
        class YoloLoss(nn.Module):
            def forward(self, output):
                dtype = torch.cuda.FloatTensor if output.is_cuda else torch.FloatTensor
                mask = torch.zeros(output.shape).type(dtype)
                scale = torch.ones(output.shape).type(output.type())
                return (output * mask * scale).sum()
        model = nn.Linear(4, 4).cuda()
        """,
    ]

    INVALID = [
        Example(
            """
            import torch
            from torch import nn
            class Pos(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1))  # expect: TL011
                    return x + self.emb(pos)
            model = Pos().cuda()
            """,
            fixed="""
            import torch
            from torch import nn
            class Pos(nn.Module):
                def forward(self, x):
                    pos = torch.arange(x.size(1), device=x.device)  # expect: TL011
                    return x + self.emb(pos)
            model = Pos().cuda()
            """,
        ),
        # Aliased torch, a hidden state built in forward.
        Example(
            """
            import torch as T
            import torch.nn as nn
            class Encoder(nn.Module):
                def forward(self, inputs):
                    h0 = T.zeros(self.layers, inputs.size(0), self.hidden)  # expect: TL011
                    out, _ = self.gru(inputs, h0)
                    return out
            device = T.device("cuda" if T.cuda.is_available() else "cpu")
            """,
            fixed="""
            import torch as T
            import torch.nn as nn
            class Encoder(nn.Module):
                def forward(self, inputs):
                    h0 = T.zeros(self.layers, inputs.size(0), self.hidden, device=inputs.device)  # expect: TL011
                    out, _ = self.gru(inputs, h0)
                    return out
            device = T.device("cuda" if T.cuda.is_available() else "cpu")
            """,
        ),
        # Mixed straight into an expression.
        """
        import torch
        from torch import nn
        class AddNoise(nn.Module):
            def forward(self, x):
                return x + 0.1 * torch.randn(x.shape)  # expect: TL011
        model.to(device)
        """,
        # A multi-element tensor literal.
        """
        import torch
        from torch import nn
        class Boxes(nn.Module):
            def forward(self, boxes, w, h):
                scale = torch.tensor([w, h, w, h], dtype=torch.float32)  # expect: TL011
                return boxes * scale
        net = Boxes().cuda()
        """,
        # A method that forward calls through self.
        """
        import torch
        from torch.nn import Module
        class Decoder(Module):
            def causal_mask(self, n):
                return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)  # expect: TL011

            def forward(self, x):
                return self.attn(x, mask=self.causal_mask(x.size(1)))
        model = Decoder().to("cuda")
        """,
        # A cast to a dtype is not a move.
        """
        import torch
        from torch import nn
        class Timestep(nn.Module):
            def forward(self, t):
                freqs = torch.arange(self.half).to(torch.float32)  # expect: TL011
                return t[:, None] * freqs[None]
        model.cuda()
        """,
        # An output buffer filled in a loop (the seq2seq tutorial without `.to(device)`).
        """
        import torch
        import torch.nn as nn
        class Seq2Seq(nn.Module):
            def forward(self, src, trg):
                outputs = torch.zeros(trg.shape[0], trg.shape[1], self.vocab)  # expect: TL011
                for t in range(1, trg.shape[0]):
                    outputs[t] = self.decoder(trg[t - 1])
                return outputs
        device = torch.device("cuda")
        """,
        # A loss accumulator started on the CPU.
        """
        import torch
        from torch import nn
        class MultiLoss(nn.Module):
            def forward(self, preds, targets):
                total = torch.zeros(1)  # expect: TL011
                for p, t in zip(preds, targets):
                    total += self.crit(p, t)
                return total
        loss_fn = MultiLoss().cuda()
        """,
        # A LightningModule's forward, with an eye matrix.
        """
        import torch
        import lightning as L
        class Whiten(L.LightningModule):
            def forward(self, x):
                eye = torch.eye(x.size(-1))  # expect: TL011
                return x @ (eye + self.w)
        trainer = L.Trainer(accelerator="cuda")
        """,
        # A subclass of a local module class.
        """
        import torch
        from torch import nn
        class Base(nn.Module):
            pass

        class Sampler(Base):
            def forward(self, logits):
                u = torch.rand(logits.shape)  # expect: TL011
                return (logits - torch.log(-torch.log(u))).argmax(-1)
        model = Sampler().to(device)
        """,
        # Moving a different tensor does not move this one.
        """
        import torch
        from torch import nn
        class Attn(nn.Module):
            def forward(self, q, k):
                scores = (q @ k.transpose(-2, -1)).to(q.device)
                mask = torch.ones(q.size(1), k.size(1)).tril()  # expect: TL011
                return scores.masked_fill(mask == 0, float("-inf"))
        device = "cuda"
        """,
        # A helper builds the default hidden state; another helper feeds it to a layer.
        """
        import torch
        class DCRNN(torch.nn.Module):
            def _set_hidden_state(self, X, H):
                if H is None:
                    H = torch.zeros(X.shape[0], self.out_channels)  # expect: TL011
                return H

            def _update_gate(self, X, edge_index, H):
                return torch.sigmoid(self.conv_x_z(X, edge_index) + self.conv_h_z(H, edge_index))

            def forward(self, X, edge_index, H=None):
                H = self._set_hidden_state(X, H)
                Z = self._update_gate(X, edge_index, H)
                return Z * H
        model = DCRNN().to(device)
        """,
        # linspace through a chain of methods.
        """
        import torch
        from torch import nn
        class Grid(nn.Module):
            def forward(self, feats):
                ys = torch.linspace(-1, 1, feats.size(2)).view(1, -1, 1)  # expect: TL011
                return feats * ys
        model = Grid().cuda()
        """,
        # A default mask for a missing argument, built on the CPU (speechbrain's GlobalNorm).
        """
        import torch
        from torch import nn
        class Norm(nn.Module):
            def forward(self, x, lengths=None):
                if lengths is None:
                    lengths = torch.ones(len(x))  # expect: TL011
                mask = self.make_mask(x, lengths)
                return x * mask

            def make_mask(self, x, lengths):
                positions = torch.arange(x.size(1), device=x.device)
                return (positions[None] < lengths[:, None] * x.size(1)).unsqueeze(-1)
        model.cuda()
        """,
        # A row of a 2-D table is still a tensor, not a scalar.
        """
        import torch
        from torch import nn
        class Jitter(nn.Module):
            def forward(self, x):
                noise = torch.randn(2, x.size(-1))  # expect: TL011
                return x * noise[0] + noise[1]
        device = "cuda"
        """,
        # A hidden state built in a LightningModule's training_step and fed to its own forward
        # (Lightning-AI/pytorch-lightning#3738); Lightning places the module, not this tensor.
        """
        import torch
        import pytorch_lightning as pl
        class RNN(pl.LightningModule):
            def forward(self, letter, hidden):
                return self.rnn(self.embedding(letter), hidden)

            def training_step(self, batch, batch_idx):
                letters, targets = batch
                hidden = torch.zeros(self.n_layers, letters.size(1), self.hidden_size)  # expect: TL011
                output, hidden = self(letters, hidden)
                return self.criterion(output, targets)
        """,
        # `.type()` to a CPU tensor type or a dtype leaves the tensor on the host.
        """
        import torch
        import torch.nn as nn
        class MaskedLoss(nn.Module):
            def forward(self, output):
                mask = torch.ones(output.shape).type(torch.FloatTensor)  # expect: TL011
                return (output * mask.type(torch.float16)).sum()
        model = nn.Linear(4, 4).cuda()
        """,
        # A loss module built in forward around a CPU weight, then called on the inputs.
        """
        import torch
        import torch.nn as nn
        class WeightedLoss(nn.Module):
            def forward(self, output, target):
                weight = torch.ones(output.shape)  # expect: TL011
                return nn.BCELoss(weight=weight)(output, target)
        model = nn.Linear(4, 4).cuda()
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        if _sets_default_device(ctx) or an.is_test_file(ctx):
            return
        finder = _Finder(ctx)
        # A LightningModule is written to run on whatever accelerator the Trainer picks.
        if not _mentions_device(ctx) and not finder.lightning_classes():
            return
        seen: set[int] = set()
        for forward, methods in finder.forwards():
            for method in methods:
                for call in finder.idx.within(method, cst.Call):
                    if id(call) in seen or not finder.is_factory(call):
                        continue
                    seen.add(id(call))
                    if not finder.reaches_device(call):
                        continue
                    yield self._report(ctx, finder, call, forward, method)

    def _report(
        self, ctx: FileContext, finder: _Finder, call: cst.Call, forward: cst.FunctionDef, method: cst.FunctionDef
    ) -> Report:
        factory = ctx.module.code_for_node(call.func)
        owner = finder.funcs.enclosing_class(method)
        where = f"`{owner.name.value}.{method.name.value}`" if owner is not None else f"`{method.name.value}`"
        scope = finder.idx.scope(call)
        first = finder.first_tensor_input(scope) if isinstance(scope, cst.FunctionDef) else None
        if forward.name.value in LIGHTNING_STEPS:
            first, suggestion = None, "device=self.device"
        else:
            suggestion = f"device={first}.device" if first else "device=<an input>.device"
        fix = None
        if first is not None and scope is forward:
            device = cst.Arg(
                keyword=cst.Name("device"),
                value=cst.Attribute(cst.Name(first), cst.Name("device")),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
            args = list(call.args)
            if args:
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            fix = FixSpec(
                f"pass `{suggestion}`",
                ((call, call.with_changes(args=(*args, device))),),
                safe=False,
            )
        return self.report(
            call,
            f"`{factory}(...)` in {where} creates its tensor on the CPU while the model may run on a GPU: "
            f"pass `{suggestion}` (or use `x.new_*` / `torch.*_like`)",
            fix,
        )


def _mentions_device(ctx: FileContext) -> bool:
    """The file runs models somewhere other than the default device: CUDA, or any `device`."""
    if an.uses_cuda(ctx):
        return True
    idx = an.index(ctx)
    return any(node.value == "device" for node in idx.nodes(cst.Name))


def _sets_default_device(ctx: FileContext) -> bool:
    return any(
        an.callee_name(call) in ("set_default_device", "set_default_tensor_type")
        for call in an.index(ctx).nodes(cst.Call)
    )


class Flow(Enum):
    """What happens to a CPU tensor: moved to a device, mixed with a tensor on the model's
    device, returned by `forward`, or none of these (kept local, used as an index, read on
    the host)."""

    MOVED = 3
    MIXED = 2
    RETURNED = 1  # returned by `forward`: the model's output
    NONE = 0


def _worst(flows: Iterable[Flow]) -> Flow:
    """A move anywhere means the author placed the tensor; otherwise any mix is the bug."""
    return max(flows, key=lambda flow: flow.value, default=Flow.NONE)


class _Finder:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = an.index(ctx)
        self.imps = an.imports(ctx)
        self.funcs = an.functions(ctx)
        self.bindings = an.bindings(ctx)
        self._modules: dict[str, bool] = {}
        self._device_names: dict[tuple[int, str | None], set[str]] = {}
        # Local names holding a one-dimensional factory result (scope id, name): an element is a scalar.
        self._one_dimensional: set[tuple[int, str]] = set()
        # The parameter of a helper that currently holds the CPU tensor being followed (function id -> name).
        self._following: dict[int, str] = {}
        self._tensor_attrs: dict[str, set[str]] = {}
        self.classes = {cls.name.value: cls for cls in self.idx.nodes(cst.ClassDef)}

    # -- where to look ----------------------------------------------------------

    def is_module_class(self, name: str, _seen: frozenset[str] = frozenset()) -> bool:
        if name in self._modules:
            return self._modules[name]
        cls = self.classes.get(name)
        result = False
        if cls is not None and name not in _seen:
            for base in cls.bases:
                qualified = self.imps.qualify(base.value) or ""
                if (
                    qualified.startswith(("torch.nn.", "nn."))
                    or qualified.endswith("LightningModule")
                    or self.is_module_class(an.last_name(base.value) or "", _seen | {name})
                ):
                    result = True
                    break
        self._modules[name] = result
        return result

    def lightning_classes(self) -> list[str]:
        return [name for name in self.classes if self.is_lightning_class(name)]

    def is_lightning_class(self, name: str, _seen: frozenset[str] = frozenset()) -> bool:
        cls = self.classes.get(name)
        if cls is None or name in _seen:
            return False
        return any(
            (self.imps.qualify(base.value) or "").endswith("LightningModule")
            or self.is_lightning_class(an.last_name(base.value) or "", _seen | {name})
            for base in cls.bases
        )

    def forwards(self) -> Iterator[tuple[cst.FunctionDef, list[cst.FunctionDef]]]:
        """Each module class's `forward` (and a LightningModule's step hooks) with the methods
        it runs through `self`."""
        for name, methods in self.funcs.methods.items():
            if not self.is_module_class(name):
                continue
            roots = ["forward", *(LIGHTNING_STEPS if self.is_lightning_class(name) else ())]
            for root in roots:
                method = methods.get(root)
                if method is not None:
                    yield method, self._methods_run_by(method)

    def _methods_run_by(self, forward: cst.FunctionDef) -> list[cst.FunctionDef]:
        found: dict[int, cst.FunctionDef] = {id(forward): forward}
        stack = [forward]
        while stack:
            current = stack.pop()
            for call in self.idx.within(current, cst.Call):
                if self._self_call(call):
                    for method in self.funcs.resolve(call):
                        if id(method) not in found:
                            found[id(method)] = method
                            stack.append(method)
        return list(found.values())

    def first_tensor_input(self, func: cst.FunctionDef) -> str | None:
        """`x` for `def forward(self, x, ...)`: the first parameter that holds a device tensor."""
        names = self._names_on_device(func)
        return next((p.name.value for p in func.params.params if p.name.value in names), None)

    def _self_call(self, call: cst.Call) -> bool:
        owner = an.receiver(call)
        return isinstance(owner, cst.Name) and owner.value == "self"

    # -- which factories --------------------------------------------------------

    def is_factory(self, call: cst.Call) -> bool:
        if self.imps.callee(call) not in FACTORIES:
            return False
        if any(arg.star for arg in call.args) or an.keyword(call, "device") or an.keyword(call, "out"):
            return False
        if _zero_dim_or_empty(call) or _placeholder(self.idx, call) or _scalar_element(self.idx, call):
            return False
        return not self._device_guarded(call)

    def _device_guarded(self, call: cst.Call) -> bool:
        """`if x.is_cuda: ... else: t = torch.rand(n)`: a branch chosen by the device, whose
        author placed each tensor on purpose."""
        scope = self.idx.scope(call)
        for ancestor in self.idx.ancestors(call):
            if ancestor is scope:
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and not self.idx.contains(ancestor.test, call):
                if self._tests_device(ancestor.test, scope):
                    return True
        return False

    def _tests_device(self, test: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        tests = [test]
        for name in self.idx.within(test, cst.Name):
            binding = self.bindings.before(scope, name.value, self.idx.order(test))
            if binding is not None and binding.value is not None:
                tests.append(binding.value)
        names = (node.value for expr in tests for node in self.idx.within(expr, cst.Name))
        strings = (an.string_text(node) for expr in tests for node in self.idx.within(expr, cst.SimpleString))
        return any(name in ("is_cuda", "device", "is_cpu") for name in names) or any(
            text in ("cuda", "cpu") for text in strings
        )

    def reaches_device(self, call: cst.Call) -> bool:
        """The CPU tensor meets a tensor on the model's device and nothing moves it first."""
        return self._flow(call, 0) is Flow.MIXED

    # -- following the tensor -----------------------------------------------------

    def _flow(self, start: cst.CSTNode, depth: int) -> Flow:
        """Follow `start` (the factory call, or a later use of a name holding its result) up
        through the expression around it, then through the names it is stored in."""
        func = self.idx.scope(start)
        current: cst.CSTNode = start
        for parent in self.idx.ancestors(start):
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return Flow.NONE
            step = self._step(parent, current, start, func, depth)
            if step is not None:
                return step
            if isinstance(parent, cst.Return):
                return self._returned(parent, depth)
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                return self._stored(parent, current, start, func, depth)
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseStatement)):
                return Flow.NONE
            current = parent
        return Flow.NONE

    def _step(
        self, parent: cst.CSTNode, current: cst.CSTNode, start: cst.CSTNode, func: cst.CSTNode, depth: int
    ) -> Flow | None:
        """What one enclosing expression does with the CPU value `current`; None to go on up."""
        if isinstance(parent, cst.Attribute) and parent.value is current and parent.attr.value in METADATA:
            return Flow.NONE
        if isinstance(parent, cst.SubscriptElement):
            return Flow.NONE  # an index: PyTorch accepts CPU indices into CUDA tensors
        if isinstance(parent, cst.Subscript) and parent.value is current and self._element_of_1d(parent, current):
            return Flow.NONE  # `t[i]` of a 1-D tensor: a 0-dim scalar
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is current:
            return Flow.NONE  # a host-side condition
        if isinstance(parent, cst.Call):
            return self._call_step(parent, current, start, func, depth)
        others: list[cst.CSTNode] = []
        if isinstance(parent, cst.BinaryOperation):
            others = [parent.left, parent.right]
        elif isinstance(parent, cst.Comparison):
            others = [parent.left, *(c.comparator for c in parent.comparisons)]
        if any(not self.idx.contains(o, start) and self.on_device(o, func) for o in others):
            return Flow.MIXED
        return None

    def _call_step(
        self, call: cst.Call, current: cst.CSTNode, start: cst.CSTNode, func: cst.CSTNode, depth: int
    ) -> Flow | None:
        if call.func is current and not isinstance(current, cst.Attribute):
            # The value is itself called: a module built around it (`nn.BCELoss(weight=w)`).
            return Flow.MIXED if any(self.on_device(arg.value, func) for arg in call.args) else Flow.NONE
        if call.func is current:  # a method of the CPU tensor: `t.to(...)`, `t.masked_fill(...)`
            assert isinstance(current, cst.Attribute)
            method = current.attr.value
            if method in MOVES and (method != "to" or not _dtype_only(call, self.imps)):
                return Flow.MOVED
            if method == "type":  # `t.type()` names the type; `t.type(torch.cuda.FloatTensor)` moves
                if not call.args:
                    return Flow.NONE
                return None if _host_type(call, self.imps) else Flow.MOVED
            if method in HOST_READS or method in METADATA_CALLS or (method in REDUCTIONS and not call.args):
                return Flow.NONE  # `t.max()`: a 0-dim tensor
            if method not in SCALAR_ARG_METHODS and any(self.on_device(arg.value, func) for arg in call.args):
                return Flow.MIXED
            return None
        if not isinstance(current, cst.Arg):
            return None
        name = an.callee_name(call)
        if name in REGISTERS:
            return Flow.MOVED
        if an.method_name(call) == "copy_":
            return Flow.NONE  # copying into an existing tensor crosses devices by itself
        if name in HOST_BUILTINS and isinstance(call.func, cst.Name) and not self.imps.is_imported(call.func):
            return Flow.NONE
        if current.keyword is not None and current.keyword.value == "device":
            return Flow.NONE
        if self.imps.callee(call) in FACTORIES:
            return Flow.NONE  # a size or a bound of another factory: read on the host
        if "ctc" in (an.callee_name(call) or "").lower():
            return Flow.NONE  # CTC losses take CPU targets and lengths (cuDNN requires them)
        if self._calls_submodule(call, func):
            return Flow.MIXED  # `self.embedding(cpu)`
        passed = self._passed_to_local(call, current, depth)
        if passed is Flow.MIXED and depth < MAX_FLOW and self._flow(call, depth + 1) is Flow.MOVED:
            # The caller moves what the helper computed: the CPU work is deliberate, and the
            # helper's own mixing was judged with the caller's devices (longt5's side bias).
            return Flow.MOVED
        if passed in (Flow.MOVED, Flow.MIXED):
            return passed
        if isinstance(call.func, cst.Attribute) and self.on_device(call.func.value, func):
            return Flow.MIXED  # `x.masked_fill(cpu_mask, 0)`
        if not self._is_torch_op(call):
            return None  # a function of another module may move its arguments itself
        if any(arg is not current and self.on_device(arg.value, func) for arg in call.args):
            return Flow.MIXED  # `torch.matmul(x, cpu)`
        if isinstance(current.value, (cst.List, cst.Tuple)) and any(
            not self.idx.contains(e, start) and self.on_device(e.value, func) for e in current.value.elements
        ):
            return Flow.MIXED  # `torch.cat([x, cpu])`
        return None

    def _passed_to_local(self, call: cst.Call, arg: cst.Arg, depth: int) -> Flow:
        """`self.helper(cpu)`, `helper(cpu)`: what the helper does with its parameter."""
        if depth >= MAX_FLOW:
            return Flow.NONE
        flows = []
        for target in self.funcs.resolve(call):
            param = _parameter_for(target, call, arg)
            if param is None or id(target) in self._following:
                continue
            # Inside the helper the parameter holds the CPU tensor, whatever its annotation says.
            self._following[id(target)] = param
            try:
                flows.append(self._uses_flow(param, target, self.idx.order(target.body) - 1, depth + 1))
            finally:
                del self._following[id(target)]
        return _worst(flows)

    def _is_torch_op(self, call: cst.Call) -> bool:
        callee = self.imps.callee(call) or ""
        if callee.startswith("torch."):
            return True
        # A snippet that uses `F.relu` without importing `F`.
        return callee.startswith(("F.", "nn.functional.")) and not self.imps.is_imported(call.func)

    def _calls_submodule(self, call: cst.Call, func: cst.CSTNode) -> bool:
        """`self.embedding(t)`, `self.layers[i](t)`, `layer(t)` for a layer of the model."""
        callee = call.func
        while isinstance(callee, cst.Subscript):
            callee = callee.value
        if isinstance(callee, cst.Attribute) and an.dotted(callee.value) == "self":
            return not self.funcs.resolve(call) and callee.attr.value not in SELF_HELPERS
        if isinstance(callee, cst.Name) and callee.value == "self":
            return self._in_lightning_step(func)  # `self(x)`: the module's own forward
        return isinstance(callee, cst.Name) and callee.value in self._names_on_device(func)

    def _in_lightning_step(self, func: cst.CSTNode) -> bool:
        if not isinstance(func, cst.FunctionDef) or func.name.value not in LIGHTNING_STEPS:
            return False
        owner = self.funcs.enclosing_class(func)
        return owner is not None and self.is_lightning_class(owner.name.value)

    def _stored(
        self,
        statement: cst.Assign | cst.AnnAssign | cst.AugAssign,
        current: cst.CSTNode,
        start: cst.CSTNode,
        func: cst.CSTNode,
        depth: int,
    ) -> Flow:
        value = statement.value
        if value is None:
            return Flow.NONE
        if value is not current:
            if isinstance(statement, cst.AugAssign):
                # `cpu += value`: an in-place op with a device tensor.
                return Flow.MIXED if self.on_device(value, func) else Flow.NONE
            # `cpu[i] = value` copies across devices; the tensor stays on the CPU. That only
            # breaks the model when `forward` returns it.
            holder = an.dotted(start) if isinstance(start, (cst.Name, cst.Attribute)) else None
            if holder is None or depth >= MAX_FLOW or not self.on_device(value, func):
                return Flow.NONE
            later = self._uses_flow(holder, self.idx.scope(statement), self.idx.end(statement), depth)
            return Flow.MIXED if later in (Flow.RETURNED, Flow.MIXED) else Flow.NONE
        if isinstance(statement, cst.AugAssign):
            return Flow.MIXED if self.on_device(statement.target, func) else Flow.NONE
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
        flows: list[Flow] = []
        for target in targets:
            if isinstance(target, cst.Subscript):
                # Copied into another tensor, which keeps its own device: whether that one
                # meets the model is that tensor's story.
                continue
            name = _paired_name(self.idx, target, value, current)
            if name is None or depth >= MAX_FLOW or an.says_host(name):
                continue  # `x_host = ...`: kept on the host on purpose
            scope = self.idx.scope(statement)
            if self._holds_1d(start) and _elementwise_path(self.idx, start, value):
                self._one_dimensional.add((id(scope), name))
            flows.append(self._uses_flow(name, scope, self.idx.end(statement), depth, statement))
        return _worst(flows)

    def _holds_1d(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call):
            return _one_dimensional(node)
        name = an.dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        return name is not None and (id(self.idx.scope(node)), name) in self._one_dimensional

    def _element_of_1d(self, subscript: cst.Subscript, current: cst.CSTNode) -> bool:
        if not _scalar_index(subscript):
            return False
        name = an.dotted(current) if isinstance(current, (cst.Name, cst.Attribute)) else None
        return name is not None and (id(self.idx.scope(subscript)), name) in self._one_dimensional

    def _uses_flow(
        self, name: str, scope: cst.CSTNode, after: int, depth: int, origin: cst.CSTNode | None = None
    ) -> Flow:
        """What the uses of `name` in `scope` after source position `after` do with it; uses in
        another branch of an `if` than `origin` (the assignment) never see its value."""
        uses = [
            use
            for use in an.mentions(self.idx, scope, name)
            if self.idx.order(use) > after
            and not isinstance(self.idx.parent(use), (cst.AssignTarget, cst.AnnAssign))
            and (origin is None or not an.in_exclusive_branches(self.idx, origin, use))
        ]
        return _worst(self._flow(use, depth + 1) for use in uses)

    def _returned(self, statement: cst.Return, depth: int) -> Flow:
        """A helper method returns the tensor: what its callers in the class do with it.
        `forward` returns it to code this file may not show, which may move it."""
        method = self.idx.scope(statement)
        if isinstance(method, cst.FunctionDef) and method.name.value == "forward":
            return Flow.RETURNED
        if not isinstance(method, cst.FunctionDef) or depth >= MAX_FLOW:
            return Flow.NONE
        sites = [
            site
            for site in self.funcs.call_sites(method)
            if self._self_call(site) and not _dead_branch(self.idx, method, site, statement)
        ]
        return _worst(self._flow(site, depth + 1) for site in sites)

    # -- what lives on the model's device ---------------------------------------

    def on_device(self, expr: cst.CSTNode, func: cst.CSTNode) -> bool:
        """`expr` involves a tensor that lives where the model does: an input of the method,
        a parameter, buffer or submodule output of the module, or a name computed from them.
        Shapes, dtypes and other host-side reads of those do not count."""
        names = self._names_on_device(func)
        attrs = self._attrs_on_device(func)
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                if node.attr.value in METADATA:
                    continue
                if an.dotted(node.value) == "self":
                    if node.attr.value in attrs:
                        return True
                    continue
            elif isinstance(node, cst.Call):
                if an.method_name(node) in METADATA_CALLS or an.method_name(node) in HOST_READS:
                    continue
                if self.imps.callee(node) in FACTORIES or an.callee_name(node) in HOST_BUILTINS:
                    continue
                if self._calls_submodule(node, func):
                    return True
            elif isinstance(node, cst.Name):
                if node.value in names:
                    return True
                continue
            elif isinstance(node, (cst.Lambda, cst.FunctionDef)):
                continue
            stack.extend(an.children(node))
        return False

    def _names_on_device(self, func: cst.CSTNode) -> set[str]:
        following = self._following.get(id(func))
        key = (id(func), following)
        names = self._device_names.get(key)
        if names is not None:
            return names
        names = self._device_names[key] = set()
        if not isinstance(func, cst.FunctionDef):
            return names
        for param in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params):
            if param.name.value != following and self._param_on_device(func, param):
                names.add(param.name.value)
        bindings = self.idx.within(func, cst.Assign, cst.AnnAssign, cst.For, cst.WithItem)
        for _ in range(2):  # twice: loops use names bound further down
            for node in bindings:
                value = node.iter if isinstance(node, cst.For) else node.item if isinstance(node, cst.WithItem) else node.value
                if value is None or not self.on_device(value, func):
                    continue
                if isinstance(node, cst.Assign):
                    targets = [t.target for t in node.targets]
                elif isinstance(node, cst.WithItem):
                    targets = [node.asname.name] if node.asname is not None else []
                else:
                    targets = [node.target]
                for target in targets:
                    # `x[i] = ...` and `self.x = ...` bind no local name (`i` is only read).
                    names.update(n.value for n in an.target_names(target))
        return names

    def _param_on_device(self, func: cst.FunctionDef, param: cst.Param) -> bool:
        """An input of `forward` is a tensor unless its annotation or default says otherwise; a
        helper's parameter is on the device when a call in the class passes it such a value."""
        name = param.name.value
        if name in ("self", "cls"):
            return False
        annotation = param.annotation
        if annotation is not None:
            return "Tensor" in self.ctx.module.code_for_node(annotation.annotation)
        if _scalar_default(param):
            return False
        if func.name.value == "forward":
            return True
        if self._in_lightning_step(func):
            # The batch, which Lightning moved; not `batch_idx` or `dataloader_idx`.
            return name == next(iter(_call_params(func)), None)
        for site in self.funcs.call_sites(func):
            if not self._self_call(site):
                continue
            passed = _argument_for(func, site, name)
            if passed is not None and self.on_device(passed.value, self.idx.scope(site)):
                return True
        return False

    def _attrs_on_device(self, func: cst.CSTNode) -> set[str]:
        """Attributes of the method's class that hold parameters, buffers or submodules."""
        cls = self.idx.enclosing(func, (cst.ClassDef,))
        if cls is None:
            return set()
        key = cls.name.value
        attrs = self._tensor_attrs.get(key)
        if attrs is not None:
            return attrs
        attrs = self._tensor_attrs[key] = set()
        for call in self.idx.within(cls, cst.Call):
            if an.callee_name(call) in ("register_buffer", "register_parameter", "register_module", "add_module"):
                first = an.positional(call)[:1]
                text = an.string_text(first[0].value) if first else None
                if text:
                    attrs.add(text)
        for assign in self.idx.within(cls, cst.Assign):
            value = assign.value
            if not isinstance(value, cst.Call):
                continue
            callee = self.imps.callee(value) or ""
            short = callee.rpartition(".")[2]
            if not ((callee.startswith(("torch.nn.", "nn.")) and short[:1].isupper()) or self.is_module_class(short)):
                continue
            for target in assign.targets:
                if isinstance(target.target, cst.Attribute) and an.dotted(target.target.value) == "self":
                    attrs.add(target.target.attr.value)
        return attrs


def _call_params(func: cst.FunctionDef) -> list[str]:
    """The names that a call's positional arguments bind to (after `self` for a method)."""
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if params and params[0] in ("self", "cls") and not _is_static(func):
        params = params[1:]
    return params


def _argument_for(func: cst.FunctionDef, call: cst.Call, name: str) -> cst.Arg | None:
    passed = an.keyword(call, name)
    if passed is not None:
        return passed
    params = _call_params(func)
    positional = an.positional(call)
    index = params.index(name) if name in params else len(positional)
    return positional[index] if index < len(positional) else None


def _parameter_for(func: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    if arg.keyword is not None:
        return arg.keyword.value
    positional = an.positional(call)
    params = _call_params(func)
    index = next((i for i, a in enumerate(positional) if a is arg), len(params))
    return params[index] if index < len(params) else None


def _is_static(func: cst.FunctionDef) -> bool:
    return any(an.last_name(d.decorator) == "staticmethod" for d in func.decorators)


def _scalar_default(param: cst.Param) -> bool:
    """`scale=1.0`, `mode="a"`, `flag=False`: a parameter that is no tensor."""
    default = param.default
    return isinstance(default, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(default, cst.Name) and default.value in ("True", "False")
    )


def _paired_name(
    idx: an.Index, target: cst.BaseExpression, value: cst.BaseExpression, current: cst.CSTNode
) -> str | None:
    """The dotted name that `current` (inside `value`) is stored in; for `a, b = x, y`, the
    target paired with the element that holds it."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return None
        for t, v in zip(target.elements, value.elements):
            if idx.contains(v, current):
                return an.dotted(t.value)
        return None
    return an.dotted(target)


def _zero_dim_or_empty(call: cst.Call) -> bool:
    """`torch.tensor(1.0)`, `torch.zeros(())`, `torch.full((), v)`: 0-dim tensors mix with CUDA
    tensors. `torch.tensor([])`, `torch.empty(0)`: empty placeholders."""
    args = an.positional(call)
    short = an.last_name(call.func)
    if short == "tensor":
        data = args[0].value if args else None
        if isinstance(data, (cst.List, cst.Tuple)):
            return not data.elements
        return not isinstance(data, cst.ListComp)
    size_kw = an.keyword(call, "size")
    shape = size_kw.value if size_kw is not None else (args[0].value if args and short in SHAPED else None)
    if isinstance(shape, (cst.Tuple, cst.List)):
        sizes = [e.value for e in shape.elements]
        return not sizes or (len(sizes) == 1 and _is_zero(sizes[0]))
    return len(args) == 1 and shape is not None and _is_zero(shape)


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.evaluated_value == 0


def _dtype_only(call: cst.Call, imps: an.Imports) -> bool:
    """`.to(torch.float32)`, `.to(x.dtype)`, `.to(dtype=...)`: a cast that stays on the device."""
    if an.keyword(call, "device") is not None:
        return False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in ("dtype", "non_blocking", "copy", "memory_format"):
                return False
            continue
        is_dtype = _torch_member(arg.value, imps) in DTYPES or (
            isinstance(arg.value, cst.Attribute) and arg.value.attr.value == "dtype"
        )
        if not is_dtype:
            return False
    return True


def _host_type(call: cst.Call, imps: an.Imports) -> bool:
    """`.type(torch.float16)`, `.type(torch.LongTensor)`, `.type("torch.FloatTensor")`: a cast
    that stays on the host. A type held in a variable or read from a tensor may be a CUDA one."""
    value = call.args[0].value
    if isinstance(value, cst.SimpleString):
        return "cuda" not in value.value
    member = _torch_member(value, imps)
    return member in DTYPES or member.endswith("Tensor")


def _torch_member(expr: cst.BaseExpression, imps: an.Imports) -> str:
    """`float16` for `torch.float16` (however torch is imported), `""` for anything else."""
    qualified = imps.qualify(expr) or ""
    return qualified[6:] if qualified.startswith("torch.") and qualified.count(".") == 1 else ""


def _sizes(call: cst.Call) -> list[cst.BaseExpression] | None:
    """The sizes a shaped factory was given, when the code spells them out."""
    short = an.last_name(call.func)
    size_kw = an.keyword(call, "size")
    args = an.positional(call)
    shape: cst.BaseExpression | None
    if size_kw is not None:
        shape = size_kw.value
    elif short == "randint":
        shape = args[-1].value if args else None
    elif short == "full":
        shape = args[0].value if args else None
    elif short in SHAPED and args:
        shape = args[0].value
        if len(args) > 1 or _int_like(shape):
            return [a.value for a in args]
    else:
        return None
    if isinstance(shape, (cst.Tuple, cst.List)):
        return [e.value for e in shape.elements]
    return None


def _int_like(expr: cst.BaseExpression) -> bool:
    """`3`, `n + 1`, `x.size(0)`, `x.shape[1]`, `len(xs)`, `batch_size`: one size, not a shape."""
    if isinstance(expr, cst.Name):
        return not expr.value.lower().endswith(("shape", "sizes", "dims", "size_"))
    if isinstance(expr, cst.Call):
        return (an.method_name(expr) == "size" and bool(expr.args)) or an.callee_name(expr) in ("len", "int")
    return isinstance(expr, (cst.Integer, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript))


def _one_dimensional(call: cst.Call) -> bool:
    """`torch.arange(n)`, `torch.rand(2)`, `torch.randint(a, b, (1,))`, `torch.tensor([a, b])`."""
    short = an.last_name(call.func)
    if short in ONE_DIMENSIONAL:
        return True
    if short == "tensor":
        data = an.positional(call)[0].value if an.positional(call) else None
        return isinstance(data, (cst.List, cst.Tuple)) and not any(
            isinstance(e.value, (cst.List, cst.Tuple, cst.ListComp)) for e in data.elements
        )
    sizes = _sizes(call)
    return sizes is not None and len(sizes) == 1 and _int_like(sizes[0])


def _scalar_index(subscript: cst.Subscript) -> bool:
    """`t[0]`, `t[i]`: one plain index (no slice, no tuple, no `None`)."""
    if len(subscript.slice) != 1:
        return False
    index = subscript.slice[0].slice
    if not isinstance(index, cst.Index):
        return False
    value = index.value
    if isinstance(value, cst.Name):
        return value.value not in ("None", "Ellipsis")
    return isinstance(value, (cst.Integer, cst.UnaryOperation))


def _scalar_element(idx: an.Index, call: cst.Call) -> bool:
    """`torch.randint(a, b, (1,))[0]`: a 0-dim element of a one-dimensional factory."""
    parent = idx.parent(call)
    indexed = isinstance(parent, cst.Subscript) and parent.value is call and _scalar_index(parent)
    return indexed and _one_dimensional(call)


def _elementwise_path(idx: an.Index, start: cst.CSTNode, value: cst.CSTNode) -> bool:
    """Between `start` and the stored `value`, only arithmetic and shape-keeping methods."""
    current = start
    while current is not value:
        parent = idx.parent(current)
        if parent is None:
            return False
        if isinstance(parent, cst.Call):
            if parent.func is not current:
                return False
        elif isinstance(parent, cst.Attribute):
            call = idx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent and parent.attr.value in ELEMENTWISE):
                return False
        elif not isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            return False
        current = parent
    return True


def _placeholder(idx: an.Index, call: cst.Call) -> bool:
    """`torch.empty(1)` used as it is: uninitialized memory, so only a placeholder that a
    kernel ignores (DeepSpeed passes one for "no mask")."""
    if an.last_name(call.func) != "empty":
        return False
    sizes = _sizes(call)
    if sizes is None or not all(isinstance(size, cst.Integer) for size in sizes):
        return False
    numel = 1
    for size in sizes:
        assert isinstance(size, cst.Integer)
        numel *= int(size.evaluated_value)
    parent = idx.parent(call)
    return numel <= 1 and not (isinstance(parent, cst.Attribute) and parent.value is call)


def _dead_branch(idx: an.Index, method: cst.FunctionDef, site: cst.Call, node: cst.CSTNode) -> bool:
    """`node` runs only under `if shape is not None:` (or `if shape:`) where `shape` defaults
    to None and `site` does not pass it: that call never reaches `node`."""
    for ancestor in idx.ancestors(node):
        if ancestor is method:
            return False
        if not isinstance(ancestor, cst.If) or not idx.contains(ancestor.body, node):
            continue
        name = _tested_not_none(ancestor.test)
        param = next((p for p in (*method.params.params, *method.params.kwonly_params) if p.name.value == name), None)
        if (
            param is not None
            and isinstance(param.default, cst.Name)
            and param.default.value == "None"
            and _argument_for(method, site, param.name.value) is None
        ):
            return True
    return False


def _tested_not_none(test: cst.BaseExpression) -> str | None:
    """`x` for `x is not None` or a bare `x`."""
    if isinstance(test, cst.Name):
        return test.value
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.IsNot)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return test.left.value
    return None
