from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules._analysis.devices import LIGHTNING_STEPS, ForwardFactories, runs_on_device, sets_default_device


class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Finds tensor factories (`torch.zeros`, `ones`, `empty`, `full`, `arange`, `rand`, `randn`,
    `randint`, `randperm`, `eye`, `tensor`, `linspace`, `logspace`) called without `device=`
    inside an `nn.Module`'s `forward` (or a method or function of the file that `forward` calls,
    or a function of another module of the folder whose result a layer's `forward` computes
    with: `x + sinusoid_table(n, d)`), or
    in a LightningModule's `training_step` / `validation_step` / `test_step` / `predict_step`,
    or in any other function that creates its other tensors on an input's device
    (`torch.zeros(n, device=scores.device)`: a helper of a structured layer or a loss),
    in a project that runs models on a device (the file itself, or another module of the
    project, such as the training script that moves a layer library's model to CUDA; or the
    file defines a LightningModule, which the Trainer places on its accelerator), when
    nothing moves the new tensor to the input's device afterwards.

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
    or computed by a helper whose result the caller moves; nor tensors handed to a function,
    method or module of the project that moves them to a device before it reads them (a
    rotary embedding whose `forward` starts with `ids = ids.to(device)`). Test files are not
    checked.

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
    # Neither a device nor `forward` is a trigger: another module of the project may be the
    # one that moves the model, or the layer whose `forward` calls this module's function.
    TRIGGERS = (("zeros", "ones", "empty", "full", "arange", "rand", "eye", "tensor", "linspace", "logspace"),)
    CONFIRMED_BY = ("TL101",)

    VALID = [
        # a shape read as a CPU tensor for ONNX export, joined with a CPU constant
        """
        import torch
        from torch import nn
        class Positions(nn.Module):
            def forward(self, input):
                bsz, seq_len = torch.onnx.operators.shape_as_tensor(input)
                shape = torch.cat((bsz.view(1), seq_len.view(1), torch.tensor([-1], dtype=torch.long)))
                return torch.onnx.operators.reshape_from_tensor_shape(self.table, shape)
        model = Positions().cuda()
        """,
        # a module-level helper that `forward` gives only a size: what it mixes is no tensor
        """
        import torch
        from torch import nn
        def scaled_positions(n, scale):
            return torch.arange(n) * scale
        class Pos(nn.Module):
            def forward(self, x):
                return x + self.emb(scaled_positions(x.size(1), 2).to(x.device))
        model = Pos().cuda()
        """,
        # a NumPy table moved to the input's device, and a NumPy index used to select rows
        """
        import numpy as np
        import torch
        from torch import nn
        class Encoding(nn.Module):
            def forward(self, x):
                table = torch.from_numpy(np.ones((x.size(1), x.size(2)))).to(x.device)
                rows = torch.from_numpy(np.arange(x.size(0)))
                return x[rows] + table
        model = nn.Sequential(Encoding()).cuda()
        """,
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
        # The parts of an unpacked grid are moved before they meet the input.
        """
        import torch
        from torch import nn
        class CoordConv(nn.Module):
            def forward(self, feats):
                ys, xs = torch.meshgrid(torch.arange(feats.size(2)), torch.arange(feats.size(3)), indexing="ij")
                return feats + torch.stack([xs, ys]).to(feats.device)
        model = CoordConv().cuda()
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
        # A helper that creates its tensors on its input's device, or like its input, and
        # keeps a CPU index for selecting rows; and a host buffer filled by a copy.
        """
        import torch
        class SpanScorer:
            def score(self, emissions):
                batch, steps = emissions.shape[:2]
                keep = torch.ones(batch, steps, device=emissions.device).bool()
                start = torch.zeros_like(emissions[..., 0])
                rows = torch.arange(batch)
                return emissions.masked_fill(~keep.unsqueeze(-1), 0.0)[rows].sum(1) + start
        def to_host(t):
            buf = torch.empty(t.size(), dtype=t.dtype, pin_memory=True)
            buf.copy_(t, non_blocking=True)
            return buf
        model = Tagger().cuda()
        """,
        # Frame indices handed to a rotary embedding whose `forward` moves them to the device it
        # is given before it reads them (diffusers' Helios and Framepack ropes), and a kernel
        # built on the host for a float sigma and divided by its own sum, which the filter
        # moves to its input's device (diffusers' stable video diffusion resize).
        """
        import torch
        from torch import nn
        class FrameRotary(nn.Module):
            def forward(self, frame_indices, device):
                batch = frame_indices.shape[0]
                frame_indices = frame_indices.to(device=device, dtype=torch.float32)
                return frame_indices[..., None].expand(batch, -1, 8)
        def gaussian(window, sigma):
            if isinstance(sigma, float):
                sigma = torch.tensor([[sigma]])
            x = torch.arange(window, device=sigma.device, dtype=sigma.dtype) - window // 2
            gauss = torch.exp(-x.pow(2.0) / (2 * sigma.pow(2.0)))
            return gauss / gauss.sum(-1, keepdim=True)
        def filter2d(image, kernel):
            weight = kernel[:, None, ...].to(device=image.device, dtype=image.dtype)
            return torch.nn.functional.conv2d(image, weight)
        class Video(nn.Module):
            def __init__(self):
                super().__init__()
                self.rope = FrameRotary()
            def forward(self, hidden_states, frame_indices=None):
                if frame_indices is None:
                    frame_indices = torch.arange(hidden_states.shape[1]).unsqueeze(0)
                angles = self.rope(frame_indices=frame_indices, device=hidden_states.device)
                blurred = filter2d(hidden_states, gaussian(5, 1.5)[..., None, :])
                return blurred * angles.cos()
        model = Video().cuda()
        """,
    ]

    INVALID = [
        # A helper outside any module creates its other tensors on its input's device, but
        # not this mask: on a GPU the mask meets the CUDA scores.
        """
        import torch
        class SpanScorer:
            def score(self, emissions):
                batch, steps = emissions.shape[:2]
                bonus = torch.linspace(0, 1, steps, device=emissions.device)
                keep = torch.ones(batch, steps).bool()  # expect: TL011
                keep[:, 0] = False
                return emissions.masked_fill(~keep.unsqueeze(-1), 0.0).sum(1) + bonus.sum()
        model = Tagger().cuda()
        """,
        # a module-level helper that `forward` calls with its input
        """
        import torch
        from torch import nn
        def add_positions(x):
            return x + torch.arange(x.size(-1))  # expect: TL011
        class Pos(nn.Module):
            def forward(self, x):
                return add_positions(x)
        model = Pos().cuda()
        """,
        # a module-level helper that builds a coordinate grid and returns it to `forward`
        """
        import torch
        from torch import nn
        def pixel_grid(h, w):
            ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")  # expect: TL011
            return torch.stack([xs, ys], dim=-1).float()
        class FlowHead(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(16, 2, 1)
            def forward(self, feat):
                h, w = feat.shape[-2:]
                return self.conv(feat).permute(0, 2, 3, 1) + pixel_grid(h, w)
        model = FlowHead().to("cuda")
        """,
        # an encoding built with NumPy and turned into a CPU tensor on every call
        Example(
            """
            import numpy as np
            import torch
            from torch import nn
            class Encoding(nn.Module):
                def forward(self, x):
                    table = np.ones((x.size(1), x.size(2)))
                    return x + torch.from_numpy(table).float()  # expect: TL011
            model = nn.Sequential(Encoding()).cuda()
            """,
            fixed="""
            import numpy as np
            import torch
            from torch import nn
            class Encoding(nn.Module):
                def forward(self, x):
                    table = np.ones((x.size(1), x.size(2)))
                    return x + torch.from_numpy(table).to(x.device).float()  # expect: TL011
            model = nn.Sequential(Encoding()).cuda()
            """,
        ),
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
        # A grid unpacked from `torch.meshgrid`: each part is still on the CPU.
        """
        import torch
        from torch import nn
        class CoordConv(nn.Module):
            def forward(self, feats):
                rows = torch.arange(feats.size(2))  # expect: TL011
                ys, xs = torch.meshgrid(rows, rows, indexing="ij")
                return feats + torch.stack([xs, ys]).float()
        model = CoordConv().cuda()
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
        # Frame indices handed to a rotary embedding of the file that reads them as they are.
        """
        import torch
        from torch import nn
        class FrameRotary(nn.Module):
            def forward(self, frame_indices):
                return frame_indices[..., None] * self.freqs
        class Video(nn.Module):
            def __init__(self):
                super().__init__()
                self.rope = FrameRotary()
                self.register_buffer("freqs", torch.ones(8))
            def forward(self, hidden_states):
                frame_indices = torch.arange(hidden_states.shape[1]).unsqueeze(0)  # expect: TL011
                return hidden_states * self.rope(frame_indices).cos()
        model = Video().cuda()
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
        if sets_default_device(ctx) or an.is_test_file(ctx):
            return
        finder = ForwardFactories(ctx)
        seen: set[int] = set()
        found: list[tuple[cst.Call, cst.FunctionDef, cst.FunctionDef]] = []
        for forward, methods in finder.forwards():
            for method in methods:
                for call in finder.idx.within(method, cst.Call):
                    if id(call) not in seen and finder.is_factory(call):
                        seen.add(id(call))
                        found.append((call, forward, method))
        # A LightningModule is written to run on whatever accelerator the Trainer picks.
        if not found or not (runs_on_device(ctx) or finder.lightning_classes()):
            return
        for call, forward, method in found:
            if finder.reaches_device(call):
                yield self._report(ctx, finder, call, forward, method)

    def _report(
        self, ctx: FileContext, finder: ForwardFactories, call: cst.Call, forward: cst.FunctionDef, method: cst.FunctionDef
    ) -> Report:
        factory = ctx.module.code_for_node(call.func)
        owner = finder.funcs.enclosing_class(method)
        where = f"`{owner.name.value}.{method.name.value}`" if owner is not None else f"`{method.name.value}`"
        scope = finder.idx.scope(call)
        first = finder.first_tensor_input(scope) if isinstance(scope, cst.FunctionDef) else None
        if forward.name.value in LIGHTNING_STEPS:
            first = None
        device_text = "self.device" if forward.name.value in LIGHTNING_STEPS else f"{first or '<an input>'}.device"
        device = cst.Attribute(cst.Name(first or "_"), cst.Name("device"))
        # `torch.from_numpy` takes no device: its tensor is moved after it is made.
        if an.callee_name(call) == "from_numpy":
            what, replacement = f"move it: `{factory}(...).to({device_text})`", cst.Call(
                func=cst.Attribute(value=call, attr=cst.Name("to")), args=[cst.Arg(device)]
            )
            fix_text = f"move it with `.to({device_text})`"
        else:
            args = list(call.args)
            if args:
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            keyword = cst.Arg(
                keyword=cst.Name("device"),
                value=device,
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
            what, replacement = f"pass `device={device_text}` (or use `x.new_*` / `torch.*_like`)", call.with_changes(
                args=(*args, keyword)
            )
            fix_text = f"pass `device={device_text}`"
        fix = FixSpec(fix_text, ((call, replacement),), safe=False) if first is not None and scope is forward else None
        return self.report(
            call,
            f"`{factory}(...)` in {where} creates its tensor on the CPU while the model may run on a GPU: {what}",
            fix,
        )
