def start_epoch(sampler, epoch):
    if hasattr(sampler, "set_epoch"):
        sampler.set_epoch(epoch)
