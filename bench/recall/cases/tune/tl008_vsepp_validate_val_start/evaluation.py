import numpy as np
import torch


def encode_data(model, data_loader, log_step=10, logging=print):
    """Encode all images and captions loadable by `data_loader`"""
    # switch to evaluate mode
    model.val_start()

    img_embs = None
    cap_embs = None
    for i, (images, captions, lengths, ids) in enumerate(data_loader):
        model.logger = None

        # compute the embeddings
        img_emb, cap_emb = model.forward_emb(images, captions, lengths, volatile=True)

        if img_embs is None:
            img_embs = np.zeros((len(data_loader.dataset), img_emb.size(1)))
            cap_embs = np.zeros((len(data_loader.dataset), cap_emb.size(1)))

        img_embs[ids] = img_emb.data.cpu().numpy().copy()
        cap_embs[ids] = cap_emb.data.cpu().numpy().copy()

        if i % log_step == 0:
            logging("Test: [{0}/{1}]".format(i, len(data_loader)))
        del images, captions

    return img_embs, cap_embs


def i2t(images, captions, npts=None, measure="cosine"):
    """Images->Text (Image Annotation)"""
    if npts is None:
        npts = images.shape[0] // 5
    ranks = np.zeros(npts)
    for index in range(npts):
        im = images[5 * index].reshape(1, images.shape[1])
        d = np.dot(im, captions.T).flatten()
        inds = np.argsort(d)[::-1]
        rank = 1e20
        for i in range(5 * index, 5 * index + 5, 1):
            tmp = np.where(inds == i)[0][0]
            if tmp < rank:
                rank = tmp
        ranks[index] = rank
    r1 = 100.0 * len(np.where(ranks < 1)[0]) / len(ranks)
    r5 = 100.0 * len(np.where(ranks < 5)[0]) / len(ranks)
    r10 = 100.0 * len(np.where(ranks < 10)[0]) / len(ranks)
    medr = np.floor(np.median(ranks)) + 1
    meanr = ranks.mean() + 1
    return (r1, r5, r10, medr, meanr)
