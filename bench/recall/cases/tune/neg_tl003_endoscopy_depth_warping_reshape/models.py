import torch
import torch.nn.functional as F


class DepthScalingLayer(torch.nn.Module):
    def __init__(self, epsilon=1.0e-8):
        super(DepthScalingLayer, self).__init__()
        self.epsilon = epsilon
        self.zero = torch.tensor(0.0).float().cuda()

    def forward(self, x):
        absolute_depth_estimations, input_sparse_depths, input_sparse_masks = x
        sparse_scale_maps = input_sparse_depths / (self.epsilon + absolute_depth_estimations)
        mean_sparse_scale = torch.sum(sparse_scale_maps * input_sparse_masks, dim=(1, 2, 3)) / (
            self.epsilon + torch.sum(input_sparse_masks, dim=(1, 2, 3)))
        return torch.mul(mean_sparse_scale.reshape(-1, 1, 1, 1), absolute_depth_estimations)


class DepthWarpingLayer(torch.nn.Module):
    def __init__(self, epsilon=1.0e-8):
        super(DepthWarpingLayer, self).__init__()
        self.epsilon = epsilon

    def forward(self, x):
        depth_maps_1, depth_maps_2, img_masks, translation_vectors, rotation_matrices, \
            intrinsic_matrices = x
        warped_depth_maps, intersect_masks = _depth_warping(
            depth_maps_1, depth_maps_2, img_masks, translation_vectors,
            rotation_matrices, intrinsic_matrices, self.epsilon)
        return warped_depth_maps, intersect_masks


def _depth_warping(depth_maps_1, depth_maps_2, img_masks, translation_vectors, rotation_matrices,
                   intrinsic_matrices, epsilon):
    # Generate a meshgrid for each depth map to calculate value
    num_batch, _, height, width = depth_maps_1.shape
    y_grid, x_grid = torch.meshgrid(
        [torch.arange(start=0, end=height, dtype=torch.float32).cuda(),
         torch.arange(start=0, end=width, dtype=torch.float32).cuda()])
    x_grid = x_grid.reshape(1, 1, height * width).expand(num_batch, -1, -1)
    y_grid = y_grid.reshape(1, 1, height * width).expand(num_batch, -1, -1)
    ones = torch.ones_like(x_grid)

    depth_maps_1 = torch.mul(depth_maps_1, img_masks)
    depth_flat_1 = depth_maps_1.reshape(num_batch, 1, height * width)

    # Back-project the pixels of frame 1 and move them into the camera of frame 2
    pixels_1 = torch.cat([x_grid, y_grid, ones], dim=1)
    points_1 = torch.matmul(torch.inverse(intrinsic_matrices), pixels_1) * depth_flat_1
    points_2 = torch.matmul(rotation_matrices, points_1) + translation_vectors.reshape(-1, 3, 1)

    # Project into frame 2: (batch, 3, H*W) -> (batch, H*W, 3)
    uvz_2 = torch.matmul(intrinsic_matrices, points_2).permute(0, 2, 1)
    u_2 = uvz_2[:, :, 0]
    v_2 = uvz_2[:, :, 1]
    z_2 = uvz_2[:, :, 2]

    u_2_flat = u_2.reshape(-1)
    v_2_flat = v_2.reshape(-1)
    z_2_flat = z_2.reshape(-1)
    u_2_flat = u_2_flat / (z_2_flat + epsilon)
    v_2_flat = v_2_flat / (z_2_flat + epsilon)

    # Sample the depth of frame 2 at the projected locations
    grid = torch.stack([2.0 * u_2_flat / (width - 1) - 1.0, 2.0 * v_2_flat / (height - 1) - 1.0],
                       dim=-1).reshape(num_batch, height, width, 2)
    warped_depth_maps = F.grid_sample(depth_maps_2, grid, align_corners=True)
    intersect_masks = (torch.abs(grid) <= 1.0).all(dim=-1, keepdim=True).permute(0, 3, 1, 2).float()
    intersect_masks = intersect_masks * img_masks
    return warped_depth_maps * intersect_masks, intersect_masks
