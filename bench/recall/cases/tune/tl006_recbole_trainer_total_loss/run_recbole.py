# Reconstructed: the quick-start entry point, reduced.
from recbole.config import Config
from recbole.data import create_dataset, data_preparation
from recbole.model.general_recommender import BPR
from recbole.trainer.trainer import Trainer


def run_recbole(model=None, dataset=None, config_file_list=None, config_dict=None):
    config = Config(model=model, dataset=dataset, config_file_list=config_file_list, config_dict=config_dict)
    dataset = create_dataset(config)
    train_data, valid_data, test_data = data_preparation(config, dataset)
    model = BPR(config, train_data).to(config['device'])
    trainer = Trainer(config, model)
    best_valid_score = trainer.fit(train_data, valid_data)
    return best_valid_score


if __name__ == '__main__':
    run_recbole(model='BPR', dataset='ml-100k')
