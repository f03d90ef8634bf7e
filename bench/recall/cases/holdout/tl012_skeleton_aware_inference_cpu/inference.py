import numpy as np
import torch

from model.enc_and_dec import DynamicEncoder, StaticEncoder, Decoder
from utils.bvh import read_bvh, write_bvh
from utils.skeleton import build_topology

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')

topology_a = build_topology('./datasets/Aj')
topology_b = build_topology('./datasets/BigVegas')

static_enc_a = StaticEncoder(topology_a).to(device)
dynamic_enc_a = DynamicEncoder(topology_a).to(device)
decoder_b = Decoder(topology_b).to(device)

checkpoint = torch.load('./pretrained/model.pt', map_location=device)
static_enc_a.load_state_dict(checkpoint['static_enc_a'])
dynamic_enc_a.load_state_dict(checkpoint['dynamic_enc_a'])
decoder_b.load_state_dict(checkpoint['decoder_b'])
static_enc_a.eval()
dynamic_enc_a.eval()
decoder_b.eval()

offsets_a, rotations_a = read_bvh('./datasets/Aj/test.bvh')
static_a = torch.from_numpy(offsets_a.astype(np.float32)).unsqueeze(0)
dynamic_a = torch.from_numpy(rotations_a.astype(np.float32)).permute(1, 0).unsqueeze(0)

with torch.no_grad():
    s_latent_a = static_enc_a(static_a)
    d_latent_a = dynamic_enc_a(dynamic_a, s_latent_a)
    retargeted = decoder_b(d_latent_a, s_latent_a)

write_bvh('./results/retargeted.bvh', retargeted.squeeze(0).cpu().numpy(), topology_b)
