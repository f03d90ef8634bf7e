import argparse
import logging

from training.training_loop_encoder import training_loop


class EasyDict(dict):
    __getattr__ = dict.__getitem__


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data_root', default='data/celebahq')
    parser.add_argument('--model_name', default='styleganinv_ffhq256')
    args = parser.parse_args()
    config = EasyDict(model_name=args.model_name, gpu_ids=[0], cuda=True, train_batch_size=8,
                      test_batch_size=4, test_save_step=2, save_images='out/images',
                      save_models='out/models')
    training_loop(
        config,
        dataset_args={'data_root': args.data_root, 'resolution': 256},
        E_lr_args=EasyDict(learning_rate=1e-4, decay_step=3000, decay_rate=0.8),
        D_lr_args=EasyDict(learning_rate=1e-4, decay_step=3000, decay_rate=0.8),
        opt_args=EasyDict(betas=(0.9, 0.99)),
        E_loss_args=EasyDict(loss_pix_weight=1.0, loss_feat_weight=5e-5, loss_adv_weight=0.1),
        D_loss_args=EasyDict(loss_real_weight=1.0, loss_fake_weight=1.0, loss_gp_weight=5.0),
        logger=logging.getLogger('train'),
    )


if __name__ == '__main__':
    main()
