# FLAVR's test.py as the thread describes it (reduced: the metric helpers and the dataset
# factory are imported; the argument parsing is trimmed).
import time

import torch

import config
import myutils
from dataset.vimeo90k_septuplet import get_loader
from model.FLAVR_arch import UNet_3D_3D

args, unparsed = config.get_args()
device = torch.device('cuda' if args.cuda else 'cpu')

test_loader = get_loader(args.data_root, args.test_batch_size, shuffle=False, num_workers=args.num_workers, mode='test')

model = UNet_3D_3D(args.model.lower(), n_inputs=args.nbr_frame, n_outputs=args.n_outputs,
                   joinType=args.joinType, upmode=args.upmode)
model = torch.nn.DataParallel(model).to(device)
model.load_state_dict(torch.load(args.load_from)['state_dict'], strict=True)


def test(args):
    time_taken = []
    losses, psnrs, ssims = myutils.init_meters(args.loss)
    model.eval()

    with torch.no_grad():
        for i, (images, gt_image) in enumerate(test_loader):
            images = [img_.cuda() for img_ in images]
            gt = [g_.cuda() for g_ in gt_image]

            start_time = time.time()
            out = model(images)
            time_taken.append(time.time() - start_time)

            out = torch.cat(out)
            gt = torch.cat(gt)
            myutils.eval_metrics(out, gt, psnrs, ssims)

    print("PSNR: %f, SSIM: %fn" % (psnrs.avg, ssims.avg))
    print("Time , ", sum(time_taken) / len(time_taken))
    return psnrs.avg


def main(args):
    assert args.load_from is not None
    test(args)


if __name__ == "__main__":
    main(args)
