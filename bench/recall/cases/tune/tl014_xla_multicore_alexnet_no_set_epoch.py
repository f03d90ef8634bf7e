# Multi-core training of AlexNet on Fashion MNIST with PyTorch/XLA (Colab notebook as a script)
import time

import torch
import torchvision
import torchvision.transforms as transforms
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp

flags = {}
flags['datadir'] = "/tmp/fashionmnist"
flags['batch_size'] = 32
flags['num_workers'] = 8
flags['num_epochs'] = 4
flags['seed'] = 1234

to_rgb = transforms.Lambda(lambda image: image.convert('RGB'))
resize = transforms.Resize((224, 224))
my_transform = transforms.Compose([resize, to_rgb, transforms.ToTensor()])


def map_fn(index, flags):
    torch.manual_seed(flags['seed'])
    device = xm.xla_device()

    if not xm.is_master_ordinal():
        xm.rendezvous('download_only_once')
    train_dataset = torchvision.datasets.FashionMNIST(flags['datadir'], train=True, download=True,
                                                      transform=my_transform)
    test_dataset = torchvision.datasets.FashionMNIST(flags['datadir'], train=False, download=True,
                                                     transform=my_transform)
    if xm.is_master_ordinal():
        xm.rendezvous('download_only_once')

    train_sampler = torch.utils.data.distributed.DistributedSampler(
        train_dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True)
    test_sampler = torch.utils.data.distributed.DistributedSampler(
        test_dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=False)

    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=flags['batch_size'],
                                               sampler=train_sampler, num_workers=flags['num_workers'],
                                               drop_last=True)
    test_loader = torch.utils.data.DataLoader(test_dataset, batch_size=flags['batch_size'],
                                              sampler=test_sampler, shuffle=False,
                                              num_workers=flags['num_workers'], drop_last=True)

    net = torchvision.models.alexnet(num_classes=10).to(device).train()
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(net.parameters())

    train_start = time.time()
    for epoch in range(flags['num_epochs']):
        para_train_loader = pl.ParallelLoader(train_loader, [device]).per_device_loader(device)
        for batch_num, batch in enumerate(para_train_loader):
            data, targets = batch
            output = net(data)
            loss = loss_fn(output, targets)
            optimizer.zero_grad()
            loss.backward()
            xm.optimizer_step(optimizer)
    elapsed_train_time = time.time() - train_start
    print("Process", index, "finished training. Train time was:", elapsed_train_time)

    net.eval()
    eval_start = time.time()
    with torch.no_grad():
        num_correct = 0
        total_guesses = 0
        para_test_loader = pl.ParallelLoader(test_loader, [device]).per_device_loader(device)
        for batch_num, batch in enumerate(para_test_loader):
            data, targets = batch
            output = net(data)
            best_guesses = torch.argmax(output, 1)
            num_correct += torch.eq(targets, best_guesses).sum().item()
            total_guesses += flags['batch_size']
    elapsed_eval_time = time.time() - eval_start
    print("Process", index, "with final accuracy:", num_correct / total_guesses)


xmp.spawn(map_fn, args=(flags,), nprocs=8, start_method='fork')
