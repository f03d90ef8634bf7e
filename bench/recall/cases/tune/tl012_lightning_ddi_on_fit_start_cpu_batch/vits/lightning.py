import logging

import pytorch_lightning as pl
import torch

from .models import FlowDecoder, TextEncoder
from .losses import mle_loss

_LOGGER = logging.getLogger(__name__)


class GlowTTSModel(pl.LightningModule):
    def __init__(self, n_vocab, out_channels, hidden_channels=192, n_speakers=1, ddi=True,
                 learning_rate=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.ddi = ddi
        self.encoder = TextEncoder(n_vocab, out_channels, hidden_channels)
        self.decoder = FlowDecoder(out_channels, hidden_channels)
        self.emb_g = torch.nn.Embedding(n_speakers, hidden_channels) if n_speakers > 1 else None

    def forward(self, x, x_lengths, y, y_lengths, g=None):
        if self.emb_g is not None:
            g = torch.nn.functional.normalize(self.emb_g(g)).unsqueeze(-1)
        x_m, x_logs, x_mask = self.encoder(x, x_lengths, g=g)
        z, logdet = self.decoder(y, y_lengths, g=g)
        return z, x_m, x_logs, logdet, x_mask

    def on_fit_start(self) -> None:
        if self.ddi:
            for f in self.decoder.flows:
                if getattr(f, "set_ddi", False):
                    f.set_ddi(True)

            _LOGGER.info("Doing data-dependent model initialization")
            for batch in self.trainer.datamodule.train_dataloader():
                x, x_lengths, y, y_lengths, speaker_ids, _ = batch
                with torch.no_grad():
                    self.forward(x, x_lengths, y, y_lengths, g=speaker_ids)
                break

    def training_step(self, batch, batch_idx):
        x, x_lengths, y, y_lengths, speaker_ids, _ = batch
        z, x_m, x_logs, logdet, x_mask = self(x, x_lengths, y, y_lengths, g=speaker_ids)
        loss = mle_loss(z, x_m, x_logs, logdet, x_mask)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.learning_rate)
