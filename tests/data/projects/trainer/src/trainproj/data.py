from torch.utils.data import DataLoader, DistributedSampler, RandomSampler


def make_loader(dataset, batch_size=32):
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def make_eval_loader(dataset):
    return DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=False))


def make_sampler(dataset):
    return DistributedSampler(dataset, seed=1)


def make_random_sampler(dataset):
    return RandomSampler(dataset)
