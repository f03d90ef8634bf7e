import torch

from common.evaluators.classification_evaluator import ClassificationEvaluator
from common.trainers.classification_trainer import ClassificationTrainer
from datasets.reuters import Reuters
from models.kim_cnn.model import KimCNN

if __name__ == '__main__':
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    train_iter, dev_iter, test_iter = Reuters.iters('data', 'word2vec', 'GoogleNews-vectors-negative300.txt',
                                                    batch_size=32, device=device)
    model = KimCNN(num_classes=Reuters.NUM_CLASSES, words_num=len(train_iter.dataset.TEXT_FIELD.vocab),
                   embed_dim=300, dropout=0.5).to(device)
    parameter = filter(lambda p: p.requires_grad, model.parameters())
    optimizer = torch.optim.Adam(parameter, lr=0.001, weight_decay=0)

    dev_evaluator = ClassificationEvaluator(Reuters, model, dev_iter, 32, device)
    test_evaluator = ClassificationEvaluator(Reuters, model, test_iter, 32, device)
    trainer_config = {'optimizer': optimizer, 'batch_size': 32, 'log_interval': 10,
                      'model_outfile': 'model_checkpoints/kim_cnn', 'patience': 5}
    trainer = ClassificationTrainer(model, None, train_iter, trainer_config, None, test_evaluator, dev_evaluator)
    trainer.train(30)
