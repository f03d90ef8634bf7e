from __future__ import print_function

import argparse
import os
import pickle

import numpy as np
import torch
import torch.backends.cudnn as cudnn
from torch.autograd import Variable

from data import BaseTransform, VOCDetection, VOC_300
from layers.functions import Detect, PriorBox
from models import build_net
from utils.nms_wrapper import nms
from utils.timer import Timer

parser = argparse.ArgumentParser(description='Receptive Field Block Net')
parser.add_argument('-s', '--size', default='300', help='300 or 512 input size.')
parser.add_argument('-m', '--trained_model', default='weights/RFB300_80_5.pth', type=str)
parser.add_argument('--save_folder', default='eval/', type=str)
parser.add_argument('--cuda', default=True, type=bool, help='Use cuda to train model')
parser.add_argument('--retest', default=False, type=bool, help='test cache results')
args = parser.parse_args()

if not os.path.exists(args.save_folder):
    os.mkdir(args.save_folder)

cfg = VOC_300
priorbox = PriorBox(cfg)
with torch.no_grad():
    priors = priorbox.forward()
    if args.cuda:
        priors = priors.cuda()


def test_net(save_folder, net, detector, cuda, testset, transform, max_per_image=300, thresh=0.005):
    if not os.path.exists(save_folder):
        os.mkdir(save_folder)
    num_images = len(testset)
    num_classes = 21
    all_boxes = [[[] for _ in range(num_images)] for _ in range(num_classes)]

    _t = {'im_detect': Timer(), 'misc': Timer()}
    det_file = os.path.join(save_folder, 'detections.pkl')

    for i in range(num_images):
        img = testset.pull_image(i)
        scale = torch.Tensor([img.shape[1], img.shape[0], img.shape[1], img.shape[0]])
        x = Variable(transform(img).unsqueeze(0), volatile=True)
        if cuda:
            x = x.cuda()
            scale = scale.cuda()

        _t['im_detect'].tic()
        out = net(x)      # forward pass
        boxes, scores = detector.forward(out, priors)
        detect_time = _t['im_detect'].toc()
        boxes = boxes[0]
        scores = scores[0]

        boxes *= scale
        boxes = boxes.cpu().numpy()
        scores = scores.cpu().numpy()

        _t['misc'].tic()
        for j in range(1, num_classes):
            inds = np.where(scores[:, j] > thresh)[0]
            if len(inds) == 0:
                all_boxes[j][i] = np.empty([0, 5], dtype=np.float32)
                continue
            c_bboxes = boxes[inds]
            c_scores = scores[inds, j]
            c_dets = np.hstack((c_bboxes, c_scores[:, np.newaxis])).astype(np.float32, copy=False)
            keep = nms(c_dets, 0.45, force_cpu=not cuda)
            all_boxes[j][i] = c_dets[keep[:50], :]
        nms_time = _t['misc'].toc()

        if i % 20 == 0:
            print('im_detect: {:d}/{:d} {:.3f}s {:.3f}s'.format(i + 1, num_images, detect_time, nms_time))
            _t['im_detect'].clear()
            _t['misc'].clear()

    with open(det_file, 'wb') as f:
        pickle.dump(all_boxes, f, pickle.HIGHEST_PROTOCOL)

    print('Evaluating detections')
    testset.evaluate_detections(all_boxes, save_folder)


if __name__ == '__main__':
    # load net
    img_dim = (300, 512)[args.size == '512']
    num_classes = 21
    net = build_net('test', img_dim, num_classes)
    state_dict = torch.load(args.trained_model)
    net.load_state_dict(state_dict)
    net.eval()
    print('Finished loading model!')
    testset = VOCDetection('data/VOCdevkit', [('2007', 'test')], None)
    if args.cuda:
        net = net.cuda()
        cudnn.benchmark = True
    else:
        net = net.cpu()
    detector = Detect(num_classes, 0, cfg)
    save_folder = os.path.join(args.save_folder, 'VOC')
    rgb_means = (104, 117, 123)
    test_net(save_folder, net, detector, args.cuda, testset,
             BaseTransform(net.size if hasattr(net, 'size') else img_dim, rgb_means, (2, 0, 1)),
             max_per_image=300, thresh=0.01)
