import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import AutoModel


class FrozenInTime(nn.Module):
    def __init__(self, text_params, projection_dim=256):
        super().__init__()
        self.text_model = AutoModel.from_pretrained(text_params['model'])
        self.video_model = timm.create_model('vit_base_patch16_224', pretrained=True, num_classes=0)
        self.txt_proj = nn.Sequential(nn.ReLU(), nn.Linear(self.text_model.config.hidden_size, projection_dim))
        self.vid_proj = nn.Sequential(nn.Linear(self.video_model.num_features, projection_dim))

    def forward(self, data, return_embeds=True):
        text_data = data['text']
        video_data = data['video']
        text_embeddings = self.compute_text(text_data)
        video_embeddings = self.compute_video(video_data)
        return text_embeddings, video_embeddings

    def compute_text(self, text_data):
        text_embeddings = self.text_model(**text_data).last_hidden_state[:, 0, :]
        return self.txt_proj(text_embeddings)

    def compute_video(self, video_data):
        b, t, c, h, w = video_data.shape
        frames = self.video_model(video_data.view(b * t, c, h, w)).view(b, t, -1).mean(1)
        return self.vid_proj(frames)


def sim_matrix(a, b, eps=1e-8):
    a_norm = a / torch.clamp(a.norm(dim=1)[:, None], min=eps)
    b_norm = b / torch.clamp(b.norm(dim=1)[:, None], min=eps)
    return torch.mm(a_norm, b_norm.transpose(0, 1))
