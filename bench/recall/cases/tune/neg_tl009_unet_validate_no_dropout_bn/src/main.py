import torch

from advanced_model import CleanU_Net
from dataset import SEMDataTrain, SEMDataVal
from modules import get_loss_train, train_model, validate_model

if __name__ == "__main__":
    # Dataset begin
    SEM_train = SEMDataTrain('../data/train/images', '../data/train/masks')
    SEM_val = SEMDataVal('../data/val/images', '../data/val/masks')

    # Dataloader begins
    SEM_train_load = torch.utils.data.DataLoader(dataset=SEM_train, num_workers=16, batch_size=2, shuffle=True)
    SEM_val_load = torch.utils.data.DataLoader(dataset=SEM_val, num_workers=3, batch_size=1, shuffle=True)

    # Model
    model = CleanU_Net(in_channels=1, out_channels=2)
    model = torch.nn.DataParallel(model, device_ids=list(range(torch.cuda.device_count()))).cuda()

    # Loss function
    criterion = torch.nn.CrossEntropyLoss()

    # Optimizerd
    optimizer = torch.optim.RMSprop(model.module.parameters(), lr=0.001)

    # Parameters
    epoch_start = 0
    epoch_end = 2000

    # Saving History to csv
    header = ['epoch', 'train loss', 'train acc', 'val loss', 'val acc']

    # Train
    print("Initializing Training!")
    for i in range(epoch_start, epoch_end):
        # train the model
        train_model(model, SEM_train_load, criterion, optimizer)

        train_acc, train_loss = get_loss_train(model, SEM_train_load, criterion)

        print('Epoch', str(i + 1), 'Train loss:', train_loss, "Train acc", train_acc)

        # Validation every 5 epoch
        if (i + 1) % 5 == 0:
            val_acc, val_loss = validate_model(
                model, SEM_val_load, criterion, i + 1, True, 'prediction')
            print('Val loss:', val_loss, "val acc:", val_acc)
