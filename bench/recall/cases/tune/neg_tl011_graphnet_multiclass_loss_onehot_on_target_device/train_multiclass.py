"""Train a DynEdge GNN to classify IceCube pulses into noise, muons and neutrinos."""
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import EarlyStopping

from graphnet.data.constants import FEATURES, TRUTH
from graphnet.models.gnn import DynEdge
from graphnet.models.standard_model import MulticlassClassificationTask, StandardModel
from graphnet.training.loss_functions import MultiClassificationCrossEntropyLoss
from graphnet.training.utils import make_train_validation_dataloader

features = FEATURES.DEEPCORE
truth = TRUTH.DEEPCORE


def main() -> None:
    training_dataloader, validation_dataloader = make_train_validation_dataloader(
        "data/oscNext_genie_level7.db", None, "SRTInIcePulses", features, truth,
        batch_size=512, num_workers=10)

    gnn = DynEdge(nb_inputs=len(features), global_pooling_schemes=["min", "max", "mean", "sum"])
    task = MulticlassClassificationTask(hidden_size=gnn.nb_outputs, target_label="pid",
                                        loss_function=MultiClassificationCrossEntropyLoss())
    model = StandardModel(gnn=gnn, tasks=[task], optimizer_kwargs={"lr": 1e-03, "eps": 1e-03})

    trainer = Trainer(accelerator="gpu", devices=[0], max_epochs=50,
                      callbacks=[EarlyStopping(monitor="val_loss", patience=5)])
    trainer.fit(model, training_dataloader, validation_dataloader)


if __name__ == "__main__":
    main()
