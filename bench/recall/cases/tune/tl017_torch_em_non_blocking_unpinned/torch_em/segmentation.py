import torch
import torch.utils.data

from .data import SegmentationDataset


def default_segmentation_dataset(raw_paths, raw_key, label_paths, label_key, patch_shape, **kwargs):
    return SegmentationDataset(raw_paths, raw_key, label_paths, label_key, patch_shape=patch_shape, **kwargs)


def get_data_loader(dataset: torch.utils.data.Dataset, batch_size: int, **loader_kwargs):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, **loader_kwargs)
    # monkey patch shuffle attribute to the loader
    loader.shuffle = loader_kwargs.get("shuffle", False)
    return loader


def default_segmentation_loader(raw_paths, raw_key, label_paths, label_key, batch_size, patch_shape,
                                num_workers=4, shuffle=True, **dataset_kwargs):
    ds = default_segmentation_dataset(raw_paths, raw_key, label_paths, label_key, patch_shape, **dataset_kwargs)
    return get_data_loader(ds, batch_size=batch_size, num_workers=num_workers, shuffle=shuffle)
