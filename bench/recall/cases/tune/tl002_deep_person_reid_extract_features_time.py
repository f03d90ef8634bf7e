import time

import numpy as np
import torch
from torch.nn import functional as F

from torchreid import metrics
from torchreid.utils import AverageMeter


class Engine(object):
    r"""A generic base Engine class for both image- and video-reid."""

    def __init__(self, datamanager, model, optimizer=None, scheduler=None, use_gpu=True):
        self.datamanager = datamanager
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.use_gpu = (torch.cuda.is_available() and use_gpu)
        self.train_loader = self.datamanager.train_loader
        self.test_loader = self.datamanager.test_loader

    def _parse_data_for_eval(self, data):
        imgs = data[0]
        pids = data[1]
        camids = data[2]
        return imgs, pids, camids

    def _extract_features(self, input):
        return self.model(input)

    @torch.no_grad()
    def _evaluate(self, dataset_name='', query_loader=None, gallery_loader=None,
                  dist_metric='euclidean', normalize_feature=False, ranks=[1, 5, 10, 20]):
        batch_time = AverageMeter()

        def _feature_extraction(data_loader):
            f_, pids_, camids_ = [], [], []
            for batch_idx, data in enumerate(data_loader):
                imgs, pids, camids = self._parse_data_for_eval(data)
                if self.use_gpu:
                    imgs = imgs.cuda()
                end = time.time()
                features = self._extract_features(imgs)
                batch_time.update(time.time() - end)
                features = features.data.cpu()
                f_.append(features)
                pids_.extend(pids)
                camids_.extend(camids)
            f_ = torch.cat(f_, 0)
            return f_, np.asarray(pids_), np.asarray(camids_)

        print('Extracting features from query set ...')
        qf, q_pids, q_camids = _feature_extraction(query_loader)
        print('Extracting features from gallery set ...')
        gf, g_pids, g_camids = _feature_extraction(gallery_loader)
        print('Speed: {:.4f} sec/batch'.format(batch_time.avg))

        if normalize_feature:
            qf = F.normalize(qf, p=2, dim=1)
            gf = F.normalize(gf, p=2, dim=1)
        distmat = metrics.compute_distance_matrix(qf, gf, dist_metric).numpy()
        cmc, mAP = metrics.evaluate_rank(distmat, q_pids, g_pids, q_camids, g_camids)
        print('mAP: {:.1%}'.format(mAP))
        for r in ranks:
            print('Rank-{:<3}: {:.1%}'.format(r, cmc[r - 1]))
        return cmc[0], mAP

    def test(self, dist_metric='euclidean', normalize_feature=False, ranks=[1, 5, 10, 20]):
        self.model.eval()
        targets = list(self.test_loader.keys())
        for name in targets:
            query_loader = self.test_loader[name]['query']
            gallery_loader = self.test_loader[name]['gallery']
            rank1, mAP = self._evaluate(dataset_name=name, query_loader=query_loader,
                                        gallery_loader=gallery_loader, dist_metric=dist_metric,
                                        normalize_feature=normalize_feature, ranks=ranks)
        return rank1
