# main_train_psnr.py reduced to the training loop the issue quotes (option parsing,
# logging, checkpointing and the periodic testing trimmed; the option, dataset and model
# factories are imported as in the repository).
import math

from torch.utils.data import DataLoader

from utils import utils_option as option
from data.select_dataset import define_Dataset
from models.select_model import define_Model


def main(json_path='options/swinir/train_swinir_sr_classical.json'):
    opt = option.parse(json_path, is_train=True)
    current_step = 0

    for phase, dataset_opt in opt['datasets'].items():
        if phase == 'train':
            train_set = define_Dataset(dataset_opt)
            train_size = int(math.ceil(len(train_set) / dataset_opt['dataloader_batch_size']))
            train_loader = DataLoader(train_set,
                                      batch_size=dataset_opt['dataloader_batch_size'],
                                      shuffle=dataset_opt['dataloader_shuffle'],
                                      num_workers=dataset_opt['dataloader_num_workers'],
                                      drop_last=True,
                                      pin_memory=True)

    model = define_Model(opt)
    model.init_train()

    for epoch in range(1000000):  # keep running
        for i, train_data in enumerate(train_loader):

            current_step += 1

            # -------------------------------
            # 1) update learning rate
            # -------------------------------
            model.update_learning_rate(current_step)

            # -------------------------------
            # 2) feed patch pairs
            # -------------------------------
            model.feed_data(train_data)

            # -------------------------------
            # 3) optimize parameters
            # -------------------------------
            model.optimize_parameters(current_step)

            if current_step % opt['train']['checkpoint_print'] == 0:
                message = '<epoch:{:3d}, iter:{:8,d}, lr:{:.3e}> '.format(epoch, current_step, model.current_learning_rate())
                for k, v in model.log_dict.items():
                    message += '{:s}: {:.3e} '.format(k, v)
                print(message)


if __name__ == '__main__':
    main()
