from cfgs.base_cfgs import Cfgs
from core.exec import Execution

if __name__ == '__main__':
    __C = Cfgs()
    execution = Execution(__C)
    execution.train(execution.dataset, execution.dataset_eval)
