from core.data.load_data import DataSet
from core.model.net import Net
from core.model.optim import get_optim, adjust_lr

import os, json, torch, copy, time
import numpy as np
import torch.nn as nn
import torch.utils.data as Data


class Execution:
    def __init__(self, __C):
        self.__C = __C
        self.dataset = DataSet(__C)
        self.dataset_eval = None
        if __C.EVAL_EVERY_EPOCH:
            __C_eval = copy.deepcopy(__C)
            setattr(__C_eval, 'RUN_MODE', 'val')
            self.dataset_eval = DataSet(__C_eval)

    def train(self, dataset, dataset_eval=None):
        data_size = dataset.data_size
        token_size = dataset.token_size
        ans_size = dataset.ans_size
        pretrained_emb = dataset.pretrained_emb

        # Define the MCAN model
        net = Net(self.__C, pretrained_emb, token_size, ans_size)
        net.cuda()
        net.train()

        if self.__C.N_GPU > 1:
            net = nn.DataParallel(net, device_ids=self.__C.DEVICES)

        loss_fn = torch.nn.BCELoss(reduction='sum').cuda()
        optim = get_optim(self.__C, net, data_size)
        start_epoch = 0
        loss_sum = 0

        dataloader = Data.DataLoader(
            dataset,
            batch_size=self.__C.BATCH_SIZE,
            shuffle=True,
            num_workers=self.__C.NUM_WORKERS,
            pin_memory=self.__C.PIN_MEM,
            drop_last=True
        )

        for epoch in range(start_epoch, self.__C.MAX_EPOCH):
            # Learning Rate Decay
            if epoch in self.__C.LR_DECAY_LIST:
                adjust_lr(optim, self.__C.LR_DECAY_R)

            time_start = time.time()
            for step, (img_feat_iter, ques_ix_iter, ans_iter) in enumerate(dataloader):

                optim.zero_grad()

                img_feat_iter = img_feat_iter.cuda()
                ques_ix_iter = ques_ix_iter.cuda()
                ans_iter = ans_iter.cuda()

                for accu_step in range(self.__C.GRAD_ACCU_STEPS):
                    lo = accu_step * self.__C.SUB_BATCH_SIZE
                    hi = (accu_step + 1) * self.__C.SUB_BATCH_SIZE
                    sub_img_feat_iter = img_feat_iter[lo:hi]
                    sub_ques_ix_iter = ques_ix_iter[lo:hi]
                    sub_ans_iter = ans_iter[lo:hi]

                    pred = net(sub_img_feat_iter, sub_ques_ix_iter)

                    loss = loss_fn(pred, sub_ans_iter)
                    loss /= self.__C.GRAD_ACCU_STEPS
                    loss.backward()
                    loss_sum += loss.cpu().data.numpy() * self.__C.GRAD_ACCU_STEPS

                # Gradient norm clipping
                if self.__C.GRAD_NORM_CLIP > 0:
                    nn.utils.clip_grad_norm_(net.parameters(), self.__C.GRAD_NORM_CLIP)

                optim.step()

            print('Finished in {}s'.format(int(time.time() - time_start)))
            epoch_finish = epoch + 1

            state = {
                'state_dict': net.state_dict(),
                'optimizer': optim.optimizer.state_dict(),
                'lr_base': optim.lr_base
            }
            torch.save(state, self.__C.CKPTS_PATH + 'ckpt_' + self.__C.VERSION +
                       '/epoch' + str(epoch_finish) + '.pkl')

            # Eval after every epoch
            if dataset_eval is not None:
                self.eval(dataset_eval, state_dict=net.state_dict(), valid=True)

            loss_sum = 0

    # Evaluation
    def eval(self, dataset, state_dict=None, valid=False):
        if state_dict is None:
            path = self.__C.CKPTS_PATH + 'ckpt_' + self.__C.CKPT_VERSION + \
                '/epoch' + str(self.__C.CKPT_EPOCH) + '.pkl'
            state_dict = torch.load(path)['state_dict']

        qid_list = [ques['question_id'] for ques in dataset.ques_list]
        ans_ix_list = []

        data_size = dataset.data_size
        token_size = dataset.token_size
        ans_size = dataset.ans_size
        pretrained_emb = dataset.pretrained_emb

        net = Net(self.__C, pretrained_emb, token_size, ans_size)
        net.cuda()
        net.eval()

        if self.__C.N_GPU > 1:
            net = nn.DataParallel(net, device_ids=self.__C.DEVICES)

        net.load_state_dict(state_dict)

        dataloader = Data.DataLoader(
            dataset,
            batch_size=self.__C.EVAL_BATCH_SIZE,
            shuffle=False,
            num_workers=self.__C.NUM_WORKERS,
            pin_memory=True
        )

        for step, (img_feat_iter, ques_ix_iter, ans_iter) in enumerate(dataloader):
            img_feat_iter = img_feat_iter.cuda()
            ques_ix_iter = ques_ix_iter.cuda()

            pred = net(img_feat_iter, ques_ix_iter)
            pred_np = pred.cpu().data.numpy()
            pred_argmax = np.argmax(pred_np, axis=1)

            if pred_argmax.shape[0] != self.__C.EVAL_BATCH_SIZE:
                pred_argmax = np.pad(pred_argmax, (0, self.__C.EVAL_BATCH_SIZE - pred_argmax.shape[0]),
                                     mode='constant', constant_values=-1)
            ans_ix_list.append(pred_argmax)

        ans_ix_list = np.array(ans_ix_list).reshape(-1)
        result = [{
            'answer': dataset.ix_to_ans[str(ans_ix_list[qix])],
            'question_id': int(qid_list[qix])
        } for qix in range(qid_list.__len__())]

        result_eval_file = self.__C.CACHE_PATH + 'result_run_' + self.__C.VERSION + '.json'
        json.dump(result, open(result_eval_file, 'w'))
