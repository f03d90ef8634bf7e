import torch
import torch.nn.functional as F

from .base_algo import BaseAlgo


def cosine_similarity(x1, x2):
    return F.cosine_similarity(x1, x2, dim=1)


class Hybrid(BaseAlgo):
    def __init__(self, args, train_dataset, val_dataset, test_dataset, base_res_dir, run, cuda):
        super().__init__(args, train_dataset, val_dataset, test_dataset, base_res_dir, run, cuda)

    def train(self):
        for epoch in range(self.args.epochs):
            penalty_erm = 0
            penalty_ws = 0
            train_acc = 0.0
            train_size = 0

            self.phi.train()
            for batch_idx, (x_e, y_e, d_e, idx_e, obj_e) in enumerate(self.train_dataset):
                self.opt.zero_grad()
                loss_e = torch.tensor(0.0).to(self.cuda)

                x_e = x_e.to(self.cuda)
                y_e = torch.argmax(y_e, dim=1).to(self.cuda)
                d_e = torch.argmax(d_e, dim=1).numpy()

                out = self.phi(x_e)
                erm_loss = F.cross_entropy(out, y_e.long()).to(self.cuda)
                loss_e += erm_loss
                penalty_erm += float(loss_e)

                # match pairs of the same object across the training domains
                feat = self.phi.features(x_e).mean(dim=(2, 3))
                same = (obj_e.unsqueeze(0) == obj_e.unsqueeze(1)).float().to(self.cuda)
                sim = cosine_similarity(feat.unsqueeze(2), feat.t().unsqueeze(0))
                ws_loss = ((1 - sim) * same).sum() / same.sum().clamp(min=1)
                loss_e += self.args.penalty_ws * ws_loss
                penalty_ws += float(ws_loss)

                loss_e.backward(retain_graph=False)
                self.opt.step()

                train_acc += torch.sum(torch.argmax(out, dim=1) == y_e).item()
                train_size += y_e.shape[0]

            self.scheduler.step()
            print('Train Loss Basic : ', penalty_erm, penalty_ws)
            print('Train Acc Env : ', 100 * train_acc / train_size)
            print('Done Training for epoch: ', epoch)

            # Val Dataset Accuracy
            self.val_acc.append(self.get_test_accuracy('val'))
            # Test Dataset Accuracy
            self.final_acc.append(self.get_test_accuracy('test'))

            if self.val_acc[-1] > self.max_val_acc:
                self.max_val_acc = self.val_acc[-1]
                self.max_test_acc = self.final_acc[-1]
                self.max_epoch = epoch
                self.save_model()
