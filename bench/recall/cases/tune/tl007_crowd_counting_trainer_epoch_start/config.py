from easydict import EasyDict as edict

__C = edict()
cfg = __C

__C.SEED = 3035
__C.DATASET = 'SHHB'
__C.NET = 'Res50'
__C.GPU_ID = [0]
__C.LR = 1e-5
__C.LR_DECAY = 0.995
__C.LR_DECAY_START = -1
__C.NUM_EPOCH_LR_DECAY = 1
__C.MAX_EPOCH = 200
__C.PRINT_FREQ = 10
__C.EXP_NAME = 'SHHB_Res50'
__C.VAL_DENSE_START = 50
__C.VAL_FREQ = 10
