"""One documented vocabulary for name-based guesses. Where the code does not say what an
object is (no import, no constructor in sight), its name often does: `optimizerG`, a
`val_loader`, an `evaluate()` function. Every word list that a guess relies on lives here,
with the reason it exists, so that all rules guess alike and a change reaches them all.
The end of the module holds the names of PyTorch's and Python's own API that the analyses
recognise exactly.

Part of the analysis library (`torchlint.rules._analysis` re-exports it), but outside that
package and free of LibCST: the project summaries (`torchlint.rules._summarize`) walk
`ast` with this vocabulary, and a run that only summarises an edited module must not pay
for importing LibCST and the library.
"""

from __future__ import annotations

import re
from typing import Iterable

from torchlint.rule import FileContext


GRAD_FREE_NAME = re.compile(r"no_?grad|inference|nograd", re.IGNORECASE)
_OPTIMIZER_WORDS = frozenset(
    "sgd adam adamw adamax nadam radam lbfgs rmsprop rprop adagrad adadelta asgd lion lamb lars "
    "adafactor sophia sophiag muon shampoo novograd adabelief prodigy optimizer optimiser".split()
)
OPTIMIZER_FACTORY = re.compile(r"(?i)^(create|build|get|make|init|configure|setup)_?optimi[sz]ers?\w*$")
# Objects with a `.step()` that is not an optimizer step.
_NOT_OPTIMIZER_WORDS = frozenset(
    "scaler lr warmup env envs sampler engine policy trainer model loader ema swa".split()
)
CLEAR_HELPER = re.compile(r"(?i)(zero_?grads?|clear_?grads?|reset_?grads?|grads?_to_none|set_grads?_none)")
_NAME_TOKENS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def says_grad_free(short_name: str) -> bool:
    """A context manager's or decorator's own name says it turns gradients off."""
    return short_name != "enable_grad" and bool(GRAD_FREE_NAME.search(short_name))


def says_clear_helper(name: str | None) -> bool:
    """A helper named like `zero_grads`, `clear_grad`, `set_grads_none`."""
    return bool(name) and CLEAR_HELPER.search(name or "") is not None


# Phase values that train, and parameter words that name a phase or a training flag
# (`run_epoch(model, loader, phase)`, `step(batch, train=True)`).
TRAINING_PHASES = frozenset({"train", "training", "fit"})
PHASE_WORDS = frozenset({"phase", "mode", "split", "stage"})
TRAINING_FLAG_WORDS = frozenset({"train", "training", "is_train", "is_training", "do_train", "train_mode"})
GRADIENT_WORDS = frozenset({"grad", "grads", "gradient", "gradients"})
RESCALING_WORDS = frozenset({"scale", "rescale", "normalize", "normalise", "divide", "div"})


def says_gradient_scaling(name: str | None) -> bool:
    """A helper named for rescaling gradients: `scale_grads`, `normalize_gradients`."""
    tokens = set(name_tokens(name or ""))
    return bool(tokens & GRADIENT_WORDS) and bool(tokens & RESCALING_WORDS)


def name_tokens(name: str) -> list[str]:
    """`optimizerG` -> [optimizer, g]; `d_opt2` -> [d, opt, 2]; `FusedAdam` -> [fused, adam]."""
    return [t.lower() for part in name.split("_") for t in _NAME_TOKENS.findall(part)]


def says_not_optimizer(tokens: list[str]) -> bool:
    return any(t.startswith("sched") or t in _NOT_OPTIMIZER_WORDS for t in tokens)


def name_says_optimizer(name: str | None) -> bool:
    if not name:
        return False
    tokens = name_tokens(name)
    if says_not_optimizer(tokens):
        return False
    return any(t.startswith("optim") or t in ("opt", "opts") for t in tokens)


def is_optimizer_class(name: str) -> bool:
    tokens = name_tokens(name)
    return name[:1].isupper() and not says_not_optimizer(tokens) and any(t in _OPTIMIZER_WORDS for t in tokens)


# Methods of an `nn.Module` that neither run nor train it.
MODULE_UTILITY_METHODS = frozenset(
    """eval train parameters named_parameters buffers named_buffers modules named_modules children
    named_children state_dict load_state_dict to cuda cpu half float double bfloat16 zero_grad apply
    requires_grad_ register_buffer register_parameter register_forward_hook register_forward_pre_hook
    register_full_backward_hook save_pretrained get_submodule share_memory""".split()
)
_EVALUATION_WORDS = frozenset("eval evaluate evaluation validate validation valid val test testing inference".split())
# Objects whose `.train()` / `.eval()` run a whole procedure rather than switch a module's mode.
RUNNER_WORDS = frozenset("trainer runner engine solver agent experiment learner evaluator tester validator".split())


_MODE_METHOD_WORDS = _EVALUATION_WORDS | {"train", "training"}


def name_says_mode_method(name: str) -> bool:
    """A method whose name may say it switches its object's networks to a mode
    (`model.val_start()`, `model.set_eval()`, `wrapper.train_mode()`); what it does is
    read from its definition."""
    return name not in ("eval", "train") and any(t in _MODE_METHOD_WORDS for t in name_tokens(name))


def name_says_evaluation(name: str | None) -> bool:
    """`evaluate`, `validate_epoch`, `run_val`, `test`, `eval_model`, `inference`."""
    return bool(name) and any(t in _EVALUATION_WORDS for t in name_tokens(name or ""))


# Methods of a network whose names say they run its forward pass (`model.infer(x)`,
# `net.predict(x)`, `encoder.encode(x)`); `generate` is not one: it manages its own grad mode.
_FORWARD_WORDS = frozenset("forward infer inference predict encode decode embed extract".split())


def name_says_forward(name: str | None) -> bool:
    """`infer`, `predict_proba`, `forward_features`, `encode_image`, `extract_feat`,
    `run_inference`; not `enable_forward_chunking` or `set_decoder`, which configure a
    network: the name has to start with the verb (after a `run` or `do`)."""
    tokens = name_tokens(name or "")
    if tokens[:1] in (["run"], ["do"]):
        tokens = tokens[1:]
    return bool(tokens) and tokens[0] in _FORWARD_WORDS


# Calls that wrap a network and run its layers as they are.
MODEL_WRAPPERS = frozenset(
    {"DataParallel", "DistributedDataParallel", "DDP", "FullyShardedDataParallel", "FSDP", "compile"}
)
# Functions that wrap an iterable without changing what it yields.
ITERABLE_WRAPPERS = frozenset(
    "enumerate tqdm iter islice zip progress_bar track cycle ParallelLoader MpDeviceLoader".split()
)
# Methods that hand out a wrapped loader's batches on one device (PyTorch/XLA).
DEVICE_LOADER_METHODS = frozenset({"per_device_loader"})
# Objects whose `backward(loss)` takes the loss as its argument.
FRAMEWORK_BACKWARD_WORDS = frozenset(
    {"accelerator", "accelerate", "engine", "fabric", "trainer", "strategy", "deepspeed", "self", "model", "wrapper"}
)
_TEST_PATH = re.compile(r"(^|[/\\])(test_[^/\\]*|[^/\\]*_test|conftest)\.py$|(^|[/\\])(tests?|testing)[/\\]")
_HOST_WORDS = frozenset({"cpu", "host"})
# Gradient clipping functions (`torch.nn.utils.clip_grad_norm_` and friends).
CLIP_NAMES = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_"})
# Networks that are deliberately kept frozen while another one trains.
FROZEN_WORDS = frozenset(
    """teacher target tgt ema shadow swa avg averaged momentum frozen fixed ref reference pretrained
    old prev vgg lpips inception clip perceptual""".split()
)


def is_test_file(ctx: FileContext) -> bool:
    """`test_*.py`, `*_test.py`, `conftest.py` or a file under `tests/`: code that a test suite
    runs on whatever device it picks, and that a failing test would already expose."""
    return _TEST_PATH.search(ctx.filename) is not None


def says_host(name: str | None) -> bool:
    """`x_host`, `cpu_mask`, `hostBuffer`: a name that says its value lives on the host."""
    return bool(name) and any(t in _HOST_WORDS for t in name_tokens((name or "").rpartition(".")[2]))


# Names that say a value is, or picks, a device.
# Names of timing helpers (`timeit`, `benchmark`, `measure_latency`): the project helpers
# whose summaries TL002 reads.
TIMER_WORDS = frozenset("time timeit timed timer bench benchmark measure latency throughput profile".split())


def says_timer(name: str | None) -> bool:
    return bool(TIMER_WORDS.intersection(name_tokens(name or "")))


# Sizes that stay on the host on purpose: `pack_padded_sequence` and CTC losses take CPU lengths.
LENGTH_WORDS = frozenset("len lens length lengths sizes".split())


def says_length(name: str) -> bool:
    return bool(LENGTH_WORDS.intersection(name_tokens(name)))


DEVICE_WORDS = frozenset("device devices dev gpu gpus cuda rank".split())
# Names that hold a per-process device index (`local_rank`, `args.gpu`, `device_id`).
RANK_WORDS = frozenset("rank gpu gpus local device id idx index ordinal".split())
# Short names of data loaders, besides any name with `loader` in it.
LOADER_WORDS = frozenset("dl dls".split())
# Dataset and loader hooks where a project may move its data itself.
DATA_HOOKS = re.compile(r"__getitem__|__getitems__|__iter__|__next__|collate|get_batch")
# Names that say a loader serves tokenized text: indexing token ids and padding them costs
# little next to a language model's forward pass, and such pipelines run without workers on
# purpose (torchtune's recipes). Padding alone says nothing: audio and detection pipelines
# pad too, and decode in their workers.
TEXT_WORDS = frozenset("tokenizer tokenized tokenize tokens encoded collator".split())
# Names of Hugging Face tokenizers and processors, whose `return_tensors="pt"` outputs are
# CPU tensors (`tokenizer`, `tok`, `image_processor`, `feature_extractor`).
TOKENIZER_WORDS = frozenset("tokenizer tokenizers tok processor extractor".split())
# Names of inference pipelines (Hugging Face `pipeline(...)`, diffusers' `pipe`), whose calls
# hand back host data (PIL images, NumPy arrays, Python lists) unless asked for tensors.
PIPELINE_WORDS = frozenset({"pipe", "pipeline", "pipelines"})
# Collate functions known to return CPU tensors.
KNOWN_COLLATORS = re.compile(r"(?i)datacollator|data_collator|default_collate|pad_sequence")
# Names of a micro-step count: `range(gradient_accumulation_steps)`, `range(accum_iter)`.
ACCUMULATION_WORDS = frozenset({"accum", "accumulate", "accumulation", "accumulations", "micro", "acc"})
# torch functions that create a tensor from nothing or from shapes: a fill kernel at most.
TENSOR_FACTORIES = frozenset(
    """zeros ones empty full arange linspace logspace eye rand randn randint randperm zeros_like
    ones_like empty_like full_like rand_like randn_like randint_like""".split()
)
# torch functions that turn data (a list, an array) into a tensor: on the CPU unless given a `device=`.
DATA_TO_TENSOR = frozenset({"tensor", "as_tensor", "from_numpy"})
# Words in a network's code that mean eval mode changes what it computes: its layers, a
# `self.training` branch, a `train` / `eval` override, layers that hold dropout inside.
MODE_DEPENDENT = re.compile(
    r"(?i)dropout|batch_?norm|instance_?norm|training|\beval\b|\btrain\b|lstm|gru|rnn|transformer|attention"
)
TORCH_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "nn.Module"})
# Called objects that are not networks: losses, metrics and the like.
NOT_MODEL_WORDS = frozenset(
    """loss losses criterion crit metric metrics acc accuracy score fn func function optimizer opt
    scheduler scaler tokenizer processor transform transforms augment logger writer print""".split()
)
# Packages whose base classes run evaluation hooks in the right mode (Lightning, HF Trainer).
MODE_FRAMEWORKS = frozenset(
    "lightning pytorch_lightning transformers ignite composer fastai catalyst mmengine mmcv detectron2".split()
)
# Names of data for evaluation (`val_loader`, `test_sampler`, `dev_set`): their order and
# their mode are another question than training data's.
_EVALUATION_DATA_WORDS = frozenset("val valid validation test testing eval evaluation dev".split())


def says_evaluation_data(name: str | None) -> bool:
    """`val_loader`, `self.valid_sampler`, `eval_dataloader`, and run together: `valloader`,
    `testset`."""
    last = (name or "").rpartition(".")[2]
    if _EVALUATION_DATA_WORDS.intersection(name_tokens(last)):
        return True
    lowered = last.lower()
    return lowered.startswith(("val", "test", "eval")) and any(w in lowered for w in ("loader", "data", "set", "batch"))


def says_epoch(name: str | None) -> bool:
    """`epoch`, `n_epochs`, `self.cur_epoch`, `_train_epoch`, `run_one_epoch`, `epoch_idx`."""
    return any(t.startswith("epoch") for t in name_tokens((name or "").rpartition(".")[2]))


# Running a network: a call of something named like one (`model(x)`, `self.encoder(x)`), unless
# the name is about a network rather than the network itself (`model_config`, `net_id`), or
# its first word is a verb (`build_model(cfg)`, `load_net(path)`): those build or fetch one.
_MODEL_WORDS = frozenset(
    """model net network encoder decoder backbone layer layers block module head generator
    discriminator transformer unet vae policy critic actor mlp conv attn attention classifier
    gpt bert resnet vit llm""".split()
)
_NOT_MODEL_SUFFIXES = frozenset(
    """id ids name names path dir file config cfg type types size sizes list dict state params
    parameters kwargs args info spec str fn class cls""".split()
)
_VERBS = frozenset(
    """get load import build create make init initialize register named set add find to compile
    wrap unwrap save print log shard parallelize prepare freeze unfreeze convert export quantize
    update copy clone move apply fuse replace patch setup reset check validate inspect count
    summarize describe eval evaluate test train run val benchmark profile measure time""".split()
)


def name_says_model_run(name: str | None) -> bool:
    """Calling something of this name runs a network: `model`, `self.encoder`, `netG`; not
    `Model` (a class: building one), `model_cfg` or `build_model`."""
    tokens = name_tokens(name or "")
    return bool(
        tokens
        and not (name or "")[:1].isupper()
        and tokens[0] not in _VERBS
        and tokens[-1] not in _NOT_MODEL_SUFFIXES
        and any(t in _MODEL_WORDS for t in tokens)
    )


# `.step()` of these is not a learning-rate schedule (diffusion samplers, EMA, weight-decay or
# batch-norm momentum schedules, curricula).
_NOT_LR_WORDS = frozenset(
    "noise ddpm ddim pndm dpm euler diffusion sampler beta momentum bn bnm ema wd weight decay teacher "
    "temperature temp tau mask drop dropout kl curriculum data batch alpha sigma".split()
)


def says_scheduler(name: str | None) -> bool:
    """`lr_scheduler`, `sched`, `warmup_scheduler`: a name that says learning-rate schedule;
    not `noise_scheduler`, `ema_scheduler`, `wd_scheduler`."""
    tokens = name_tokens(name or "")
    return any(t.startswith("sched") for t in tokens) and not any(t in _NOT_LR_WORDS for t in tokens)


# ---------------------------------------------------------------------------
# The names of PyTorch's and Python's own API that the analyses recognise exactly (no
# guess): the LibCST analyses (`devices`, `synchronization`, `timing`) and the project
# summaries, which walk `ast` and must not import LibCST, read the same lists here.

# A device string or a distributed backend that places work on CUDA.
CUDA_TEXT = re.compile(r"^(cuda|nccl)\b")
# Methods and builtins that bring a value back to the host: the tensor never meets the model.
HOST_READS = frozenset({"item", "tolist", "numpy", "cpu"})
# Reading these from a tensor gives host values (or a device), never device data.
METADATA = frozenset({"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad"})
# (`shape_as_tensor` gives a tensor's shape as a CPU tensor, as ONNX export traces it.)
METADATA_CALLS = frozenset(
    {"size", "dim", "numel", "nelement", "element_size", "get_device", "stride", "is_contiguous", "shape_as_tensor", "_shape_as_tensor"}
)
# Methods of a tensor whose arguments are sizes, dims or scalars, never other tensors.
SCALAR_ARG_METHODS = frozenset(
    """view reshape repeat expand unsqueeze squeeze permute transpose flatten unflatten float long int
    half double bool byte contiguous clone detach flip roll narrow split chunk sum mean prod cumsum
    cumprod clamp clamp_ tril triu tril_ triu_ repeat_interleave uniform_ normal_ fill_ random_
    exponential_ bernoulli_ zero_ exp log sqrt abs neg sin cos softmax argmax argmin topk sort unbind
    movedim""".split()
)
# Calls that select the process's current GPU.
GPU_SELECTORS = frozenset({"set_device", "set_device_index"})
# An environment variable that, set per process, leaves each process one GPU.
VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"


def call_selects_gpu(callee: str, keywords: Iterable[str | None]) -> bool:
    """A call that gives the process its own GPU, by its (qualified) callee and keyword
    names: `torch.cuda.set_device(rank)`, `torch.cuda.device(rank)`, any call with
    `device_id=` (`init_process_group`, FSDP)."""
    return callee.rpartition(".")[2] in GPU_SELECTORS or callee.endswith("cuda.device") or "device_id" in keywords


# Methods that wait for the GPU to finish the work queued so far: host reads, and the
# `synchronize()` of a device, stream or event.
WAITING_METHODS = HOST_READS | frozenset({"synchronize"})
# `torch.<op>` functions that launch no kernels (or block anyway).
TORCH_HOST_ONLY = frozenset(
    """device manual_seed seed no_grad inference_mode enable_grad autocast load save compile
    tensor as_tensor from_numpy is_tensor is_grad_enabled numel typename""".split()
)
TORCH_OP_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
# Tensor methods that are unmistakably GPU compute (generic names such as `add` or `sum`
# are left out: too many non-tensor objects have them).
TENSOR_WORK = frozenset(
    """matmul mm bmm mv addmm baddbmm einsum conv1d conv2d conv3d softmax log_softmax relu gelu
    sigmoid tanh topk argmax argmin cumsum backward""".split()
)
# Calls that read the wall clock.
WALL_CLOCKS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "timeit.default_timer",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
    }
)


def is_torch_op(callee: str) -> bool:
    """`torch.matmul`, `torch.nn.functional.relu` (a qualified name): an op that launches kernels."""
    parts = callee.split(".")
    if len(parts) == 2 and parts[0] == "torch":
        op = parts[1]
        return (
            op[:1].islower()
            and not op.startswith(("set_", "get_", "is_", "_"))
            and op not in TORCH_HOST_ONLY
            # Factories launch at most a fill kernel: not the work anyone times.
            and op not in TENSOR_FACTORIES
        )
    return callee.startswith(TORCH_OP_NAMESPACES) and len(parts) == len(TORCH_OP_NAMESPACES[0].split("."))
