import numpy as np
import torch


def train_model(model, data_train, criterion, optimizer):
    """Train the model and report validation error with training error
    Args:
        model: the model to be trained
        criterion: loss function
        data_train (DataLoader): training dataset
    """
    model.train()
    for batch, (images, masks) in enumerate(data_train):
        images = images.cuda()
        masks = masks.cuda()
        outputs = model(images)
        loss = criterion(outputs, masks)
        optimizer.zero_grad()
        loss.backward()
        # Update weights
        optimizer.step()


def get_loss_train(model, data_train, criterion):
    """
        Calculate loss over train set
    """
    total_acc = 0
    total_loss = 0
    for batch, (images, masks) in enumerate(data_train):
        with torch.no_grad():
            images = images.cuda()
            masks = masks.cuda()
            outputs = model(images)
            loss = criterion(outputs, masks)
            preds = torch.argmax(outputs, dim=1).float()
            acc = accuracy_check_for_batch(masks.cpu(), preds.cpu(), images.size()[0])
            total_acc = total_acc + acc
            total_loss = total_loss + loss.cpu().item()
    return total_acc / (batch + 1), total_loss / (batch + 1)


def validate_model(model, data_val, criterion, epoch, make_prediction=True, save_folder_name='prediction'):
    """
        Validation run
    """
    total_val_loss = 0
    total_val_acc = 0
    for batch, (images_v, masks_v, original_msk) in enumerate(data_val):
        stacked_img = torch.Tensor([]).cuda()
        for index in range(images_v.size()[1]):
            with torch.no_grad():
                image_v = images_v[:, index, :, :].unsqueeze(0).cuda()
                mask_v = masks_v[:, index, :, :].squeeze(1).cuda()
                output_v = model(image_v)
                total_val_loss = total_val_loss + criterion(output_v, mask_v).cpu().item()
                output_v = torch.argmax(output_v, dim=1).float()
                stacked_img = torch.cat((stacked_img, output_v))
        div_arr = division_array(388, 2, 2, 512, 512)
        img_cont = image_concatenate(stacked_img.cpu().data.numpy(), 2, 2, 512, 512)
        final_img = (img_cont * 255 / div_arr).astype('uint8')
        total_val_acc = total_val_acc + accuracy_check(original_msk, final_img)
    return total_val_acc / (batch + 1), total_val_loss / ((batch + 1) * 4)


def accuracy_check_for_batch(labels, pred, batch_size):
    return float((labels == pred).float().mean())


def accuracy_check(mask, prediction):
    return float(np.mean(np.asarray(mask).squeeze() == (prediction > 127)))


def division_array(crop_size, crop_num1, crop_num2, dim1, dim2):
    div_array = np.zeros([dim1, dim2])
    one_array = np.ones([crop_size, crop_size])
    dim1_stride = int((dim1 - crop_size) / (crop_num1 - 1))
    dim2_stride = int((dim2 - crop_size) / (crop_num2 - 1))
    for i in range(crop_num1):
        for j in range(crop_num2):
            div_array[dim1_stride * i:dim1_stride * i + crop_size,
                      dim2_stride * j:dim2_stride * j + crop_size] += one_array
    return div_array


def image_concatenate(image, crop_num1, crop_num2, dim1, dim2):
    crop_size = image.shape[1]
    empty_array = np.zeros([dim1, dim2]).astype("float64")
    dim1_stride = int((dim1 - crop_size) / (crop_num1 - 1))
    dim2_stride = int((dim2 - crop_size) / (crop_num2 - 1))
    index = 0
    for i in range(crop_num1):
        for j in range(crop_num2):
            empty_array[dim1_stride * i:dim1_stride * i + crop_size,
                        dim2_stride * j:dim2_stride * j + crop_size] += image[index]
            index += 1
    return empty_array
