import torch
import torch.optim as optim
from torch.utils.data import DataLoader

import dataset
import losses
import models
from unet import UNet

if __name__ == "__main__":
    device = torch.device("cuda")
    train_dataset = dataset.SfMDataset(image_file_names=dataset.list_images("training_data"),
                                       phase="train", num_pre_workers=8)
    train_loader = DataLoader(train_dataset, batch_size=4, shuffle=True, num_workers=4, pin_memory=True)

    depth_estimation_model = UNet(in_channels=3, out_channels=1).to(device)
    depth_scaling_layer = models.DepthScalingLayer(epsilon=1.0e-8)
    depth_warping_layer = models.DepthWarpingLayer(epsilon=1.0e-8)
    sparse_flow_loss_function = losses.SparseMaskedL1Loss()
    depth_consistency_loss_function = losses.NormalizedDistanceLoss(height=256, width=320)
    optimizer = optim.SGD(depth_estimation_model.parameters(), lr=1.0e-4, momentum=0.9)

    for epoch in range(100):
        depth_estimation_model.train()
        for batch, (colors_1, colors_2, sparse_depths_1, sparse_depths_2, sparse_depth_masks_1,
                    sparse_depth_masks_2, boundaries, rotations_1_wrt_2, rotations_2_wrt_1,
                    translations_1_wrt_2, translations_2_wrt_1, intrinsics) in enumerate(train_loader):
            colors_1, colors_2 = colors_1.to(device), colors_2.to(device)
            sparse_depths_1, sparse_depths_2 = sparse_depths_1.to(device), sparse_depths_2.to(device)
            sparse_depth_masks_1 = sparse_depth_masks_1.to(device)
            sparse_depth_masks_2 = sparse_depth_masks_2.to(device)
            boundaries, intrinsics = boundaries.to(device), intrinsics.to(device)
            rotations_1_wrt_2 = rotations_1_wrt_2.to(device)
            translations_1_wrt_2 = translations_1_wrt_2.to(device)

            scaled_depth_maps_1 = depth_scaling_layer(
                [torch.abs(depth_estimation_model(colors_1)), sparse_depths_1, sparse_depth_masks_1])
            scaled_depth_maps_2 = depth_scaling_layer(
                [torch.abs(depth_estimation_model(colors_2)), sparse_depths_2, sparse_depth_masks_2])

            depth_2_wrt_1, intersect_masks_1 = depth_warping_layer(
                [scaled_depth_maps_1, scaled_depth_maps_2, boundaries, translations_1_wrt_2,
                 rotations_1_wrt_2, intrinsics])
            depth_consistency_loss = depth_consistency_loss_function(
                [scaled_depth_maps_1, depth_2_wrt_1, intersect_masks_1, intrinsics])
            sparse_flow_loss = sparse_flow_loss_function([sparse_depths_1, scaled_depth_maps_1,
                                                          sparse_depth_masks_1])
            loss = depth_consistency_loss + 20.0 * sparse_flow_loss

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
