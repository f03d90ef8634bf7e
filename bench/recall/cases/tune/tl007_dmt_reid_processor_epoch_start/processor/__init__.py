from .processor import do_train
