import pandas as pd
import torch
from torch.utils.data import DataLoader


def predict(model, prediction_dataset, batch_size=1, num_workers=0, apply_softmax=False,
            label_dict=None):
    """Generate predictions on a dataset from a binary pytorch model object

    Input:
        model:              A binary torch model, e.g. torchvision.models.resnet18(pretrained=True)
        prediction_dataset: A pytorch dataset object that returns tensors, such as
                            SingleTargetAudioDataset()
    Output:
        A dataframe with the CNN prediction results for each class and each file
    """
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model.to(device)
    model.eval()

    dataloader = DataLoader(prediction_dataset, batch_size=batch_size, shuffle=False,
                            num_workers=num_workers)
    all_predictions = []
    with torch.no_grad():
        for sample in dataloader:
            X = sample["X"]
            X.cuda()
            predictions = model(X)
            if apply_softmax:
                predictions = torch.nn.functional.softmax(predictions, 1)
            all_predictions.extend(predictions.cpu().numpy())

    img_paths = prediction_dataset.df[prediction_dataset.filename_column].values
    return pd.DataFrame(index=img_paths, data=all_predictions, columns=label_dict)
