import time

import torch


def _train_or_test(model, dataloader, optimizer=None, class_specific=True, use_l1_mask=True,
                   coefs=None, log=print):
    is_train = optimizer is not None
    start = time.time()
    n_correct = 0
    n_examples = 0
    total_cross_entropy = 0
    for i, (image, label) in enumerate(dataloader):
        input = image.cuda()
        target = label.cuda()
        grad_req = torch.enable_grad() if is_train else torch.no_grad()
        with grad_req:
            output, min_distances = model(input)
            cross_entropy = torch.nn.functional.cross_entropy(output, target)
            _, predicted = torch.max(output.data, 1)
            n_examples += target.size(0)
            n_correct += (predicted == target).sum().item()
            total_cross_entropy += cross_entropy.item()
            loss = coefs['crs_ent'] * cross_entropy if coefs is not None else cross_entropy
        if is_train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        del input, target, output, predicted, min_distances
    log('\ttime: \t{0}'.format(time.time() - start))
    log('\taccu: \t\t{0}%'.format(n_correct / n_examples * 100))
    return n_correct / n_examples


def train(model, dataloader, optimizer, class_specific=False, coefs=None, log=print):
    assert (optimizer is not None)
    log('\ttrain')
    model.train()
    return _train_or_test(model=model, dataloader=dataloader, optimizer=optimizer,
                          class_specific=class_specific, coefs=coefs, log=log)


def test(model, dataloader, class_specific=False, log=print):
    log('\ttest')
    model.eval()
    return _train_or_test(model=model, dataloader=dataloader, optimizer=None,
                          class_specific=class_specific, log=log)


def warm_only(model, log=print):
    for p in model.module.features.parameters():
        p.requires_grad = False
    for p in model.module.prototype_vectors:
        p.requires_grad = True
    log('\twarm')


def joint(model, log=print):
    for p in model.module.features.parameters():
        p.requires_grad = True
    log('\tjoint')
