import torch.utils.data


def make_loader(dataset, batch_size, **options):
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, **options)


def image_loaders(train_set, val_set, batch_size=16, workers=4):
    train = make_loader(train_set, batch_size, num_workers=workers, shuffle=True)
    val = make_loader(val_set, batch_size, num_workers=workers)
    return train, val
