from .fcn import FCN


def get_segmentation_model(name, **kwargs):
    models = {
        'fcn': FCN,
    }
    return models[name.lower()](**kwargs)
