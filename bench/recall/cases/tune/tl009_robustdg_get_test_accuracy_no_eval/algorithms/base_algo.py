import torch
import torch.nn as nn
import torchvision


class BaseAlgo():
    def __init__(self, args, train_dataset, val_dataset, test_dataset, base_res_dir, run, cuda):
        self.args = args
        self.train_dataset = train_dataset['data_loader']
        self.val_dataset = val_dataset['data_loader']
        self.test_dataset = test_dataset['data_loader']
        self.train_domains = train_dataset['domain_list']
        self.total_domains = train_dataset['total_domains']
        self.domain_size = train_dataset['base_domain_size']
        self.base_res_dir = base_res_dir
        self.run = run
        self.cuda = cuda

        self.post_string = str(self.args.penalty_ws) + '_' + str(self.args.match_case) + '_' + str(self.run)
        self.phi = self.get_model()
        self.opt = self.get_opt()
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.opt, step_size=25)

        self.max_epoch = -1
        self.max_val_acc = 0.0
        self.max_test_acc = 0.0
        self.final_acc = []
        self.val_acc = []

    def get_model(self):
        # DenseNet-121 for the Chest X-ray datasets: batch norm throughout, dropout in the classifier
        phi = torchvision.models.densenet121(num_classes=self.args.out_classes, drop_rate=0.2)
        return phi.to(self.cuda)

    def get_opt(self):
        if self.args.opt == 'sgd':
            return torch.optim.SGD(self.phi.parameters(), lr=self.args.lr, weight_decay=5e-4, momentum=0.9, nesterov=True)
        return torch.optim.Adam(self.phi.parameters(), lr=self.args.lr)

    def get_test_accuracy(self, case):
        # Test Env Code
        test_acc = 0.0
        test_size = 0
        if case == 'val':
            dataset = self.val_dataset
        elif case == 'test':
            dataset = self.test_dataset

        for batch_idx, (x_e, y_e, d_e, idx_e, obj_e) in enumerate(dataset):
            with torch.no_grad():
                x_e = x_e.to(self.cuda)
                y_e = torch.argmax(y_e, dim=1).to(self.cuda)

                # Forward Pass
                out = self.phi(x_e)

                test_acc += torch.sum(torch.argmax(out, dim=1) == y_e).item()
                test_size += y_e.shape[0]

        print(' Accuracy: ', case, 100 * test_acc / test_size)
        return 100 * test_acc / test_size

    def save_model(self):
        torch.save(self.phi.state_dict(), self.base_res_dir + '/Model_' + self.post_string + '.pth')
