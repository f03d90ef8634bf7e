from __future__ import annotations

import re
from typing import Callable, Iterator

import libcst as cst

from torchlint.rule import FileContext, Report, Rule
from torchlint.rules import _analysis as an

# Frameworks that place inputs on the model's device themselves: Accelerate, Lightning/Fabric,
# DeepSpeed, HF device maps. (DataParallel and DDP wraps are followed path by path.)
PLACES_INPUTS = re.compile(
    r"accelerat|Accelerat|[Ff]abric|lightning|deepspeed|device_map|dispatch_model|"
    r"set_default_device|set_default_tensor_type|torch_xla"
)


class InputNotOnModelDevice(Rule):
    """
    ## What it does
    Finds a model moved to an accelerator (`model.cuda()`, `model.to(device)`) that is
    then called, in a training or evaluation loop over a data loader, on a batch taken
    straight from the loader that is never moved to a device: no `x.to(device)`,
    `x.cuda()`, `to_device(batch)` or `{k: v.to(device) ...}` anywhere in the loop; or, when the loop moves some parts
    of the batch, a part it forgets (`labels`, or an item `batch["mask"]` of a dict batch
    whose other items it moves one by one) that a loss or a torch op meets with the
    model's output (lengths, which stay on the host for CTC and packing, excepted). The batch is followed
    into the local helpers that the loop hands it to (`self.step(batch)`), and a model that a
    factory of this module or another project module moved and returned (`model =
    build_model(cfg)`) counts as moved. Likewise
    a sample taken from a dataset by index (`image, label = test_set[0]`, the single-image
    prediction after training) or one batch drawn from a loader (`images, labels =
    next(iter(train_loader))`) and passed to the model as the dataset made it (also to
    `writer.add_graph(model, images)`, which runs the model to trace it), and the
    tensors a tokenizer or processor returns (`tokenizer(text, return_tensors="pt")`, its
    `input_ids`) passed to the model or its `generate` before anything moves them; likewise a
    tensor that the script makes from data (`torch.tensor(ids)`, `torch.from_numpy(image)`, a
    list of them joined by `pad_sequence` or `torch.stack`) without a `device=`. And a
    tensor whose move is a statement of its own (`img.to(device)`, `img.cuda()`), its result
    thrown away, then passed to the moved model: only a module moves itself.

    ## Why is this bad?
    A `DataLoader` yields CPU tensors, and so do indexing its dataset, a tokenizer and
    `torch.tensor(data)`. The first forward pass of a CUDA model on them fails
    with `RuntimeError: Expected all tensors to be on the same device` (or `Input type
    (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same`). The
    script often works on a CPU-only laptop, where `device` is `"cpu"`, and breaks on the
    GPU machine.

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    for x, y in train_loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    Not reported: data that a dataset, collate function or the model's own `forward` in the
    same file moves, tensors created on the device, loaders prepared by Accelerate, and
    `DataParallel` / `DistributedDataParallel` models, which scatter inputs themselves:
    a model that every path wraps, or any model of a file that names such a wrapper but
    wraps no model it moves (the wrap is another module's). A wrap taken on one branch
    only (`if torch.cuda.device_count() > 1:`) leaves the other path's bare model on the
    GPU with the CPU batch, and is reported. Of the branches of one `if`/`elif`/`else`,
    one that moves part of the batch and leaves a part that a sibling branch moves is
    reported; separate `if`s that each move a part may all run, and are not.

    ## Runtime confirmation
    `torchlint probe` confirms it as TL101 device-mismatch when it runs the script on a
    machine with a GPU.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html
    - https://pytorch.org/tutorials/beginner/basics/quickstart_tutorial.html
    """

    CODE = "TL012"
    NAME = "input-not-on-model-device"
    SUMMARY = "Model moved to a GPU is called on loader batches, dataset samples or tensors that are never moved"
    # `device`: a factory of another module may move the model (`build_model(cfg, device)`).
    # The second group: what loader batches, samples and tokenizer outputs are written with,
    # and what makes the tensors whose move a statement throws away.
    TRIGGERS = (
        (".cuda(", ".to(", "device"),
        (
            "oader", "_dl", "dl_", " dl", "(dl", "_DL", "DL_", "ataset", "ImageFolder", "return_tensors",
            *sorted(f".{method}(" for method in an.TENSOR_ONLY_METHODS),
            *sorted(f"torch.{function}(" for function in an.TENSORS_FROM_DATA),
        ),
    )
    CONFIRMED_BY = ("TL101",)

    VALID = [
        # sequence lengths stay on the host for packing
        """
        import torch
        model = torch.load("rnn.pt").cuda()
        def predict(padded_ids, ids):
            lengths = torch.tensor([len(i) for i in ids])
            return model(padded_ids.cuda(), lengths)
        """,
        # tensors made from data are moved, or made on the model's device
        """
        import torch
        model = torch.load("model.pt").cuda()
        model.eval()
        def predict(array, ids):
            x = torch.from_numpy(array).unsqueeze(0)
            x = x.cuda(non_blocking=True)
            mask = torch.tensor(ids, device="cuda")
            with torch.no_grad():
                return model(x, mask), model(torch.stack([torch.tensor(ids)]).cuda())
        """,
        # the batch drawn for the graph is moved where the model is
        """
        import torch
        from torch.utils.tensorboard import SummaryWriter
        writer = SummaryWriter()
        train_loader = torch.utils.data.DataLoader(train_set, batch_size=64)
        images, labels = next(iter(train_loader))
        model = Net().to("cuda")
        writer.add_graph(model, images.to("cuda"))
        """,
        # dataset samples moved before the model sees them, samples of a dataset built on the
        # GPU, and an item of a plain list
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        model = Net().to("cuda")
        val_set = ImageDataset(root)
        image, label = val_set[0]
        image = image.to("cuda")
        pred = model(image[None])
        on_gpu = TensorDataset(torch.randn(10, 3, device="cuda"), torch.zeros(10, device="cuda"))
        loader = DataLoader(on_gpu)
        x, y = on_gpu[0]
        model(x)
        first = examples[0]
        model(first)
        """,
        # a batch object that moves itself in place (PyG's `Data`, Hugging Face's `BatchEncoding`)
        """
        model = GCN().to(device)
        for data in loader:
            data.to(device)
            out = model(data.x, data.edge_index)
        """,
        # the moved copy is kept
        """
        model = Net().cuda()
        for x, y in loader:
            x = x.cuda()
            out = model(x)
        """,
        # The batch is moved.
        """
        model = Net().to(device)
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
        """,
        # A dict batch moved with a comprehension.
        """
        model.cuda()
        for batch in loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            loss = model(**batch).loss
        """,
        # A project helper moves the batch.
        """
        model = model.to(device)
        for batch in val_loader:
            inputs, labels = prepare_batch(batch, device)
            outputs = model(inputs)
        """,
        # The device is only ever the CPU.
        """
        device = torch.device("cpu")
        model = Net().to(device)
        for x, y in loader:
            loss = loss_fn(model(x), y)
        """,
        # The dataset already yields GPU tensors.
        """
        X = torch.randn(1000, 16, device="cuda")
        Y = torch.randn(1000, 1, device="cuda")
        loader = DataLoader(TensorDataset(X, Y), batch_size=32)
        model = MLP().cuda()
        for x, y in loader:
            loss = loss_fn(model(x), y)
        """,
        # The dataset class moves each item.
        """
        class GPUData(Dataset):
            def __getitem__(self, i):
                return self.x[i].to(self.device), self.y[i].to(self.device)

        model = Net().to(device)
        for x, y in DataLoader(GPUData()):
            loss = loss_fn(model(x), y)
        """,
        # DataParallel scatters CPU inputs to the GPUs.
        """
        model = nn.DataParallel(Net()).cuda()
        for x, y in loader:
            loss = loss_fn(model(x), y)
        """,
        # every path wraps the moved model (DDP with the process's GPU, or DataParallel)
        """
        import torch.nn as nn
        model = Net()
        model.cuda()
        if args.distributed:
            model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        else:
            model = nn.DataParallel(model)
        for x, y in train_loader:
            loss = loss_fn(model(x), y)
        """,
        # a module that only tests for the wrapper: another module may wrap the model
        """
        import torch.nn as nn
        def evaluate(net, loader):
            for images, labels in loader:
                if isinstance(net, nn.DataParallel) and len(images) < len(net.device_ids):
                    continue
                print(net(images).argmax(1))
        model = Net().cuda()
        evaluate(model, val_loader)
        """,
        # branches that each move the whole batch to the device they select, a branch that
        # moves nothing (the CPU path), and moves in separate `if`s that may both run
        """
        import torch
        model = Net().to(device)
        for images, target in train_loader:
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
                target = target.cuda(args.gpu, non_blocking=True)
            elif torch.backends.mps.is_available():
                images, target = images.to("mps"), target.to("mps")
            else:
                images = images.float()
            loss = criterion(model(images), target)
        for images, target in val_loader:
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            if torch.cuda.is_available():
                target = target.cuda(args.gpu, non_blocking=True)
            loss = criterion(model(images), target)
        """,
        # Accelerate prepares the loader.
        """
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        model.to(accelerator.device)
        for batch in loader:
            loss = model(**batch).loss
        """,
        # The dataset puts all its data on the GPU when it is built.
        """
        class CudaDataset(Dataset):
            def __init__(self, inputs, targets):
                self.inputs, self.targets = inputs.cuda(), targets.cuda()

            def __getitem__(self, i):
                return self.inputs[i], self.targets[i]

        model = Net().to(device)
        train_loader = DataLoader(CudaDataset(inputs, targets), batch_size=32)
        for x, y in train_loader:
            out = model(x)
        """,
        # The model's forward moves its input.
        """
        class Net(nn.Module):
            def forward(self, x):
                x = x.to(self.fc.weight.device)
                return self.fc(x)

        model = Net().to(device)
        for x, y in loader:
            out = model(x)
        """,
        # `.to(dtype)` is not a device move.
        """
        model = Net().to(torch.float16)
        for x, y in loader:
            out = model(x.half())
        """,
        # The loop iterates something that is not a data loader.
        """
        model = Net().cuda()
        for x in inputs_list:
            out = model(x)
        """,
        # A collate function from another module may move the batch itself.
        """
        from utils import collate_to_device
        model = Net().to(device)
        loader = DataLoader(dataset, batch_size=16, collate_fn=collate_to_device)
        for inputs, targets in loader:
            out = model(inputs)
        """,
        # The loader is wrapped on the device by the caller.
        """
        def fit(model, train_dl):
            for xb, yb in train_dl:
                loss = F.cross_entropy(model(xb), yb)

        net = Net().to(device)
        fit(net, DeviceDataLoader(DataLoader(train_ds, batch_size=64), device))
        """,
        # A fresh model bound to the name after the move is on the CPU again.
        """
        import torch
        net = Net()
        net.to(device)
        for x, y in train_loader:
            net(x.to(device)).sum().backward()
        torch.save(net.state_dict(), "net.pth")
        net = Net()
        net.load_state_dict(torch.load("net.pth"))
        with torch.no_grad():
            for images, labels in test_loader:
                print(net(images).argmax(1))
        """,
        # The model is moved only after the loop.
        """
        def main():
            for x, y in loader:
                out = model(x)
            model.cuda()
        """,
        # A parameter model of a function nobody calls here: its caller may keep it on the CPU.
        """
        def train(model, loader, optimizer):
            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()

        net = Net().cuda()
        """,
        # each part of the batch is moved, or kept on the host on purpose: CTC lengths, file
        # paths handed to a helper, a metric computed on the host
        """
        import torch
        import torch.nn.functional as F
        device = torch.device("cuda")
        model = Net().to(device)
        for feats, targets, feat_lens, target_lens, paths in loader:
            feats, targets = feats.to(device), targets.to(device)
            log_probs = model(feats)
            loss = F.ctc_loss(log_probs, targets, feat_lens, target_lens)
            save_predictions(log_probs, paths)
        for images, labels in val_loader:
            images = images.to(device)
            outputs = model(images)
            acc = accuracy(outputs.cpu(), labels)
            loss = criterion(outputs, labels.to(device))
        """,
        # items of a dict batch, each moved or kept on the host on purpose (a length), or
        # the whole batch moved
        """
        import torch.nn.functional as F
        model = Net().to(device)
        for batch in loader:
            feats = batch["feats"].to(device)
            log_probs = model(feats)
            loss = F.ctc_loss(log_probs, batch["targets"].to(device), batch["feat_lens"], batch["target_lens"])
        for batch in val_loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = F.cross_entropy(model(batch["feats"]), batch["labels"])
        """,
        # a tokenizer's output moved to the model's device: the tensor, the `BatchEncoding`
        # copied or in place, a dict of moved tensors; numpy outputs and a model left on the CPU
        """
        import torch
        class Summarizer:
            def __init__(self, name):
                self.tok = AutoTokenizer.from_pretrained(name)
                self.lm = AutoModelForSeq2SeqLM.from_pretrained(name).to("cuda")
            def summarize(self, text):
                ids = self.tok.encode(text, return_tensors="pt").to(self.lm.device)
                return self.lm.generate(ids, num_beams=4)
            def score(self, text):
                enc = self.tok(text, return_tensors="pt").to("cuda")
                return self.lm(**enc).logits
            def score_pair(self, a, b):
                enc = self.tok(a, b, return_tensors="pt")
                enc.to("cuda")
                return self.lm(**enc).logits
            def embed(self, text):
                enc = self.tok(text, return_tensors="pt")
                enc = {k: v.cuda() for k, v in enc.items()}
                return self.lm(**enc)
            def lengths(self, text):
                ids = self.tok(text, return_tensors="np")["input_ids"]
                return self.lm(ids)
        cpu_model = AutoModel.from_pretrained("bert-base-uncased")
        inputs = tokenizer("hello", return_tensors="pt")
        cpu_model(**inputs)
        """,
        # objects whose `.to()` moves them in place (a `BatchEncoding`, PyG's `Data` taken
        # from a dataset), a tensor moved by assignment, a model moved only after the call
        """
        import torch
        model = Net()
        model.to(device)
        enc = tokenizer(text, return_tensors="pt")
        enc.to(device)
        model(**enc)
        graph = dataset[0]
        graph.to(device)
        model(graph)
        img = transform(image).unsqueeze(0)
        img = img.to(device)
        model(img)
        late = Net()
        x = torch.randn(1, 3)
        x.to(device)
        late(x)
        late.to(device)
        """,
    ]

    INVALID = [
        # the model handed in is moved here; the items taken from each dict batch are "moved"
        # by statements that throw the copies away (opensoundscape)
        """
        import torch
        def train(model, train_dataset, optimizer, loss_fn, epochs):
            device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
            model.to(device)
            loader = torch.utils.data.DataLoader(train_dataset, batch_size=8, shuffle=True)
            for epoch in range(epochs):
                for t in loader:
                    X, y = t["X"], t["y"]
                    X.cuda()
                    y.cuda()
                    optimizer.zero_grad()
                    loss = loss_fn(model(X), y.squeeze(1))  # expect: TL012
                    loss.backward()
                    optimizer.step()
        """,
        # a request's token lists padded into a CPU tensor for a model `__init__` moved (mosec)
        """
        import torch
        class Inference:
            def __init__(self):
                self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
                self.model = AutoModelForSequenceClassification.from_pretrained(NAME)
                self.model.to(self.device)
            def forward(self, data):
                tensors = [torch.tensor(token) for token in data]
                with torch.no_grad():
                    result = self.model(torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True))[0]  # expect: TL012
                return result.softmax(dim=1).cpu().tolist()
        """,
        # one image converted from an array and predicted on the GPU model
        """
        import torch
        model = torch.load("model.pt").cuda()
        model.eval()
        def predict(array):
            x = torch.from_numpy(array).permute(2, 0, 1).unsqueeze(0).float()
            with torch.no_grad():
                return model(x).argmax(1).item()  # expect: TL012
        """,
        # the move of a tensor, a statement of its own, throws the moved copy away
        """
        import torch
        model = EfficientNet.from_pretrained("efficientnet-b0")
        img = tfms(Image.open("img.png")).unsqueeze(0)
        img.to(device)
        model.to(device)
        model.eval()
        with torch.no_grad():
            outputs = model(img)  # expect: TL012
        """,
        # a tokenizer's tensors passed to a model that `__init__` moved to the GPU
        """
        import torch
        class Captioner:
            def __init__(self, name, device):
                self.processor = AutoProcessor.from_pretrained(name)
                self.net = AutoModelForVision2Seq.from_pretrained(name).to(device)
            def caption(self, image):
                pixels = self.processor(images=image, return_tensors="pt")["pixel_values"].half()
                out = self.net.generate(pixels, max_new_tokens=20)  # expect: TL012
                return self.processor.decode(out[0])
        """,
        # the encoding moved with its `.to()` copy thrown away: `ids` was read before it
        """
        device = torch.device("cuda")
        model = AutoModelForCausalLM.from_pretrained(name).to(device)
        enc = tokenizer(prompt, return_tensors="pt")
        ids = enc.input_ids
        enc.to(device)
        logits = model(ids).logits  # expect: TL012
        """,
        # the loop hands each batch to a step method, which feeds it to the model unmoved
        """
        import torch
        class Runner:
            def __init__(self, model, loader, optimizer):
                self.device = torch.device("cuda")
                self.model = model.to(self.device)
                self.loader = loader
                self.optimizer = optimizer
            def step(self, batch):
                inputs, targets = batch
                loss = torch.nn.functional.mse_loss(self.model(inputs), targets)  # expect: TL012
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            def run(self):
                for batch in self.loader:
                    self.step(batch)
        """,
        # the inputs are moved, the labels are forgotten: the loss mixes devices
        """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = Net().to(device)
        for epoch in range(10):
            for step, (inputs, labels) in enumerate(train_loader):
                inputs = inputs.to(device)
                outputs = model(inputs)
                loss = criterion(outputs, labels)  # expect: TL012
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
        # the model comes from a factory that moved it to the GPU
        """
        import torch
        import torchvision
        def build_model(num_classes):
            net = torchvision.models.resnet18(num_classes=num_classes)
            return net.cuda()
        model = build_model(10)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for imgs, targets in train_loader:
            loss = torch.nn.functional.cross_entropy(model(imgs), targets)  # expect: TL012
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
        # one sample of a dataset, as the dataset gives it, into a model on the GPU
        """
        import torch
        from torchvision import datasets
        from torchvision.transforms import ToTensor
        test_set = datasets.FashionMNIST("data", train=False, transform=ToTensor())
        model = Net().to("cuda")
        model.eval()
        image, label = test_set[0]
        with torch.no_grad():
            pred = model(image.unsqueeze(0))  # expect: TL012
        """,
        # one batch drawn from the loader to trace the model on the GPU for TensorBoard
        """
        import torch
        from torch.utils.tensorboard import SummaryWriter
        writer = SummaryWriter()
        train_loader = torch.utils.data.DataLoader(train_set, batch_size=64)
        images, labels = next(iter(train_loader))
        model = Net().to("cuda")
        writer.add_graph(model, images)  # expect: TL012
        """,
        # `.to()` on a tensor returns a copy, which this loop throws away
        """
        import torch
        device = torch.device("cuda")
        model = Net().to(device)
        for x, y in loader:
            x.to(device)
            y.to(device)
            loss = criterion(model(x), y)  # expect: TL012
        """,
        """
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = Net().to(device)
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)  # expect: TL012
            loss.backward()
            optimizer.step()
        """,
        # .cuda() and enumerate/tqdm around the loader.
        """
        from tqdm import tqdm
        net = models.resnet18(num_classes=10).cuda()
        for i, (images, labels) in enumerate(tqdm(trainloader)):
            outputs = net(images)  # expect: TL012
            loss = criterion(outputs, labels)
        """,
        # model.to(device) as a statement; evaluation loop.
        """
        model.to(device)
        model.eval()
        with torch.no_grad():
            for data, target in test_loader:
                output = model(data)  # expect: TL012
                correct += output.argmax(1).eq(target).sum().item()
        """,
        # A Hugging Face batch splatted into the model.
        """
        model = AutoModelForSequenceClassification.from_pretrained(name)
        model.to("cuda")
        train_dataloader = DataLoader(ds, batch_size=8, collate_fn=data_collator)
        for batch in train_dataloader:
            outputs = model(**batch)  # expect: TL012
            outputs.loss.backward()
        """,
        # Derived inputs: subscripts and tensor methods.
        """
        model = Net().to(args.device)
        for batch in val_dl:
            images = batch["image"].float()
            logits = model(images.unsqueeze(1))  # expect: TL012
        """,
        # The model passed to a function that the file calls with a moved model.
        """
        def train_epoch(model, loader, optimizer):
            for x, y in loader:
                optimizer.zero_grad()
                loss = F.cross_entropy(model(x), y)  # expect: TL012
                loss.backward()
                optimizer.step()

        net = Net().to(device)
        train_epoch(net, DataLoader(train_set, batch_size=64), optimizer)
        """,
        # A class-based trainer; the model moved in __init__.
        """
        class Trainer:
            def __init__(self, model, loader, device):
                self.model = model.to(device)
                self.loader = loader

            def train(self):
                for x, y in self.loader:
                    loss = self.criterion(self.model(x), y)  # expect: TL012
                    loss.backward()
        """,
        # The loader wrapped in a progress bar held in a variable.
        """
        model = UNet().cuda()
        train_bar = tqdm(train_loader, desc="train")
        for batch_idx, (image, mask) in enumerate(train_bar):
            pred = model(image)  # expect: TL012
            loss = dice_loss(pred, mask)
        """,
        # Keyword inputs taken from a dict batch.
        """
        model = BertForSequenceClassification.from_pretrained("bert-base-uncased").to(device=device)
        for batch in tqdm(train_dataloader, desc="Training"):
            input_ids = batch["input_ids"]
            attention_mask = batch["attention_mask"]
            outputs = model(input_ids=input_ids, attention_mask=attention_mask)  # expect: TL012
            outputs.loss.backward()
        """,
        # An evaluation function; the module-level call passes the moved model.
        """
        def evaluate(model, loader):
            model.eval()
            correct = 0
            with torch.no_grad():
                for images, labels in loader:
                    preds = model(images).argmax(dim=1)  # expect: TL012
                    correct += (preds == labels).sum().item()
            return correct

        model = torchvision.models.resnet18(num_classes=10)
        model = model.cuda()
        test_loader = torch.utils.data.DataLoader(test_set, batch_size=256)
        print(evaluate(model, test_loader))
        """,
        # The pre-0.4 Variable wrapper does not move anything.
        """
        from torch.autograd import Variable
        cnn = CNN()
        cnn.cuda()
        for epoch in range(num_epochs):
            for i, (images, labels) in enumerate(train_loader):
                images = Variable(images)
                labels = Variable(labels)
                optimizer.zero_grad()
                outputs = cnn(images)  # expect: TL012
                loss = criterion(outputs, labels)
        """,
        # The name is bound again, but to the moved model compiled.
        """
        model = Net()
        model.to("cuda")
        model = torch.compile(model)
        for x, y in loader:
            out = model(x)  # expect: TL012
        """,
        # The model is wrapped only when there are several GPUs: on one GPU the bare model
        # gets the CPU batch.
        """
        import torch
        import torch.nn as nn
        model = Net().cuda()
        if torch.cuda.device_count() > 1:
            model = nn.DataParallel(model)
        for x, y in train_loader:
            loss = loss_fn(model(x), y)  # expect: TL012
        """,
        # Each branch moves a different part of the batch: with `args.gpu` set, the target
        # stays on the CPU (the other branches move it).
        """
        import torch
        model = Net().cuda(args.gpu)
        for images, target in train_loader:
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            elif torch.backends.mps.is_available():
                images = images.to("mps")
                target = target.to("mps")
            output = model(images)
            loss = criterion(output, target)  # expect: TL012
        """,
        # A dict batch whose items the loop moves one by one, but for the mask.
        """
        model = UNet().to(device)
        for batch in val_loader:
            images = batch["image"].to(device)
            outputs = model(images)
            loss = criterion(outputs, batch["mask"])  # expect: TL012
        """,
        # The device literal on the model, forward() spelled out.
        """
        model = Net().to("cuda:0")
        loader = DataLoader(dataset, batch_size=32, shuffle=True)
        for inputs, targets in loader:
            preds = model.forward(inputs)  # expect: TL012
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        if PLACES_INPUTS.search(ctx.source):
            return
        finder = _Finder(ctx)
        if not finder.moves or finder.data.moved_by_hooks() or an.parallel_wraps(ctx).out_of_sight():
            return
        for loop in finder.idx.nodes(cst.For):
            found = finder.unmoved_call(loop)
            source = finder.data.loader(loop.iter) or loop.iter
            if found is not None:
                call, move, inputs = found
                yield self.report(call, finder.message(call, move, inputs, source))
                continue
            forgotten = finder.forgotten_part_call(loop)
            if forgotten is not None:
                call, move, part, output = forgotten
                yield self.report(call, finder.forgotten_message(call, move, part, output, source))
                continue
            left = finder.part_left_by_branch(loop)
            if left is not None:
                call, move, branch, meets = left
                yield self.report(call, finder.branch_message(call, move, branch, meets, source))
        fed: set[int] = set()  # one finding per model call, however many of its inputs stay behind
        for calls, start, source, moved in _host_data(ctx, finder.idx):
            found = finder.unmoved_host_data_call(calls, start)
            if found is not None and id(found[0]) not in fed:
                call, move, inputs = found
                fed.add(id(call))
                yield self.report(call, finder.message(call, move, inputs, source, moved=moved))
        for discarded in an.discarded_tensor_moves(ctx):
            found = finder.unmoved_after_discarded_move(discarded)
            if found is not None:
                call, move, inputs = found
                yield self.report(call, finder.discarded_message(call, move, discarded))


class _Finder:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = an.index(ctx)
        self.data = an.loader_data(ctx)
        self.models = an.model_moves(ctx)
        self.moves = an.placements(ctx).models
        # Loader data name -> the statement that moves it and throws the moved copy away.
        self.discarded: dict[str, cst.Call] = {}

    def unmoved_call(self, loop: cst.For) -> tuple[cst.Call, cst.Call, list[str]] | None:
        batch = self.data.unmoved_batch(loop)
        if batch is None:
            return None
        self.discarded = batch.discarded
        return self._first_unmoved(batch.calls, loop)

    def forgotten_part_call(self, loop: cst.For) -> tuple[cst.Call, cst.Call, cst.BaseExpression, cst.Call] | None:
        """A call (`criterion(outputs, labels)`) that meets the output of a moved model with a
        part of the batch that the loop forgot to move, while it moves the others."""
        if self.data.loader(loop.iter) is None or self.data.iterable_prepared(loop):
            return None
        for use in [*an.forgotten_part_uses(self.ctx, loop), *an.items_left_on_host(self.ctx, loop)]:
            move = self.models.before(use.output, loop)
            if move is not None:
                return use.call, move, use.part, use.output
        return None

    def part_left_by_branch(
        self, loop: cst.For
    ) -> tuple[cst.Call, cst.Call, an.PartLeftByBranch, cst.Call | None] | None:
        """The first call, on the path through a branch that moves some of the batch, that
        meets a part of it that only a sibling branch moves: passed to a moved model, or met
        with its output (the model call, last) in a loss or torch op. With the model's move."""
        if self.data.loader(loop.iter) is None or self.data.iterable_prepared(loop):
            return None
        found: list[tuple[cst.Call, cst.Call, an.PartLeftByBranch, cst.Call | None]] = []
        for left in an.parts_left_by_branches(self.ctx, loop):
            fed = self.models.first_fed(left.calls, loop)
            if fed is not None:
                found.append((fed[0], fed[1], left, None))
            for use in an.part_uses_with_output(self.ctx, loop, left.calls, {left.part}):
                move = self.models.before(use.output, loop)
                if move is not None:
                    found.append((use.call, move, left, use.output))
                    break
        return min(found, key=lambda item: self.idx.order(item[0])) if found else None

    def unmoved_host_data_call(
        self, calls: list[tuple[cst.Call, list[cst.BaseExpression]]], start: cst.CSTNode | None
    ) -> tuple[cst.Call, cst.Call, list[str]] | None:
        """A moved model called on host data bound outside a loader loop that nothing moved
        (`model(ds[0][0])`, `model.generate(ids)`, `model(torch.tensor(ids))`)."""
        self.discarded = {}
        return self._first_unmoved(calls, start)

    def unmoved_after_discarded_move(self, moved: an.DiscardedMove) -> tuple[cst.Call, cst.Call, list[str]] | None:
        """A moved model called on a tensor whose move was thrown away (`img.to(device)`); the
        model may be moved after that statement, as long as it is before the call."""
        for call, inputs in an.calls_after_discarded_move(self.idx, moved):
            found = self._first_unmoved([(call, inputs)], call)
            if found is not None:
                return found
        return None

    def _first_unmoved(
        self, calls: list[tuple[cst.Call, list[cst.BaseExpression]]], start: cst.CSTNode | None
    ) -> tuple[cst.Call, cst.Call, list[str]] | None:
        found = self.models.first_fed(calls, start)
        if found is None:
            return None
        call, move, inputs = found
        return call, move, [self.ctx.module.code_for_node(expr) for expr in inputs]

    def forgotten_message(
        self, call: cst.Call, move: cst.Call, part: cst.BaseExpression, output: cst.Call, source: cst.BaseExpression
    ) -> str:
        code = self.ctx.module.code_for_node
        model = code(an.called_module(output) or output.func)
        name = code(part)
        fix = _move_fix(code, move, name)[1]
        return (
            f"`{name}` comes from `{code(source)}` and is never moved, while the loop moves the rest "
            f"of the batch and `{model}` is moved (`{code(move)}`): `{code(call.func)}(...)` mixes "
            f"the model's output with a CPU tensor and fails with a device mismatch; move it too, "
            f"e.g. `{fix}`"
        )

    def branch_message(
        self, call: cst.Call, move: cst.Call, left: an.PartLeftByBranch, output: cst.Call | None, source: cst.BaseExpression
    ) -> str:
        code = self.ctx.module.code_for_node
        if output is None:
            model = code(an.model_call(call) or call.func)
            meets = f"`{model}`, moved to {_move_fix(code, move, left.part)[0]} (`{code(move)}`), gets it"
        else:
            model = code(an.called_module(output) or output.func)
            meets = f"`{code(call.func)}(...)` meets it with the output of `{model}`, moved (`{code(move)}`)"
        return (
            f"`{left.part}` comes from `{code(source)}` and only other branches move it "
            f"(`{code(left.moved_by)}`): `{_branch_header(code, self.idx, left)}` moves `{left.moved}` "
            f"but leaves `{left.part}` on the host, so on that path {meets} and fails with a device "
            f"mismatch; move it on every branch, e.g. `{left.part} = {_move_fix(code, move, left.part)[1]}`"
        )

    def discarded_message(self, call: cst.Call, move: cst.Call, moved: an.DiscardedMove) -> str:
        code = self.ctx.module.code_for_node
        model = code(an.model_call(call) or call.func)
        where, _ = _move_fix(code, move, moved.name)
        return (
            f"`{model}` is moved to {where} (`{code(move)}`) but `{code(moved.move)}` throws the moved "
            f"copy of its input `{moved.name}` away (a tensor's `.to()` and `.cuda()` return a new "
            f"tensor): the forward pass fails with a device mismatch; assign it, e.g. "
            f"`{moved.name} = {code(moved.move)}`"
        )

    def message(
        self, call: cst.Call, move: cst.Call, inputs: list[str], source: cst.BaseExpression, moved: str = "the batch"
    ) -> str:
        code = self.ctx.module.code_for_node
        model = code(an.model_call(call) or call.func)
        data = inputs[0]
        where, fix = _move_fix(code, move, data)
        loader = code(source)
        thrown_away = self.discarded.get(data)
        if thrown_away is not None:
            return (
                f"`{model}` is moved to {where} (`{code(move)}`) but its input `{data}` comes from "
                f"`{loader}` and `{code(thrown_away)}` throws the moved copy away (a tensor's `.to()` "
                f"and `.cuda()` return a new tensor): the forward pass fails with a device mismatch; "
                f"assign it, e.g. `{data} = {fix}`"
            )
        wraps = an.parallel_wraps(self.ctx).wraps_of(move)
        unwrapped = (
            f" (`{code(wraps[0])}`, which would place it, runs only on some paths: on the others the bare model gets it)"
            if wraps
            else ""
        )
        return (
            f"`{model}` is moved to {where} (`{code(move)}`) but its input `{data}` comes from "
            f"`{loader}` and is never moved{unwrapped}: the forward pass fails with a device "
            f"mismatch; move {moved} first, e.g. `{fix}`"
        )


def _host_data(
    ctx: FileContext, idx: an.Index
) -> Iterator[tuple[list[tuple[cst.Call, list[cst.BaseExpression]]], cst.CSTNode | None, cst.BaseExpression, str]]:
    """Host data bound outside a loader loop: the calls that get it, where it starts (None: a
    sample stays on the host until the call, so a model moved after it is taken counts), what
    made it and what a message calls it."""
    for sample in an.dataset_samples(ctx):
        moved = "the batch" if sample.drawn else "the sample"
        yield an.calls_on_raw_sample(idx, sample), None, cst.parse_expression(sample.dataset), moved
    for encoded in an.tokenizer_outputs(ctx):
        made = cst.Call(func=encoded.tokenizer.func, args=[cst.Arg(cst.Ellipsis())])
        yield an.calls_on_tokenizer_output(idx, encoded), encoded.statement, made, "the tokenizer's output"
    for tensor in an.host_tensors(ctx):
        yield an.calls_after_binding(idx, tensor.statement), tensor.statement, tensor.made, "the tensor"


def _move_fix(code: Callable[[cst.CSTNode], str], move: cst.Call, data: str) -> tuple[str, str]:
    """Where `move` puts the model, and the move of `data` that follows it there."""
    if an.method_name(move) == "cuda":
        return "the GPU", f"{data}.cuda()"
    device_arg = an.keyword(move, "device") or next(iter(an.positional(move)), None)
    if an.method_name(move) != "to" or device_arg is None:
        # The factory of another module that moved the model: its device is not in sight.
        return f"a device by `{code(move.func)}()`", f"{data}.to(device)"
    device = code(device_arg.value)
    return f"`{device}`", f"{data}.to({device})"


def _branch_header(code: Callable[[cst.CSTNode], str], idx: an.Index, left: an.PartLeftByBranch) -> str:
    """`if args.gpu is not None:`, `elif ...:` or `else:` for the block of the chain."""
    owner = idx.parent(left.branch)
    if isinstance(owner, cst.If):
        keyword = "if" if owner is left.chain else "elif"
        return f"{keyword} {code(owner.test)}:"
    return "else:"
