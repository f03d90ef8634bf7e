import os
import time
from dataclasses import dataclass

import torch
from fire import Fire
from PIL import Image

from flux.sampling import denoise, get_noise, get_schedule, prepare, unpack
from flux.util import configs, load_ae, load_clip, load_flow_model, load_t5


@dataclass
class SamplingOptions:
    prompt: str
    width: int
    height: int
    num_steps: int
    guidance: float
    seed: int | None


@torch.inference_mode()
def main(
    name: str = "flux-schnell",
    width: int = 1360,
    height: int = 768,
    seed: int | None = None,
    prompt: str = "a photo of a forest with mist swirling around the tree trunks",
    device: str = "cuda" if torch.cuda.is_available() else "cpu",
    num_steps: int | None = None,
    guidance: float = 3.5,
    output_dir: str = "output",
):
    torch_device = torch.device(device)
    if num_steps is None:
        num_steps = 4 if name == "flux-schnell" else 50

    output_name = os.path.join(output_dir, "img_{idx}.jpg")
    os.makedirs(output_dir, exist_ok=True)
    idx = 0

    t5 = load_t5(torch_device, max_length=256 if name == "flux-schnell" else 512)
    clip = load_clip(torch_device)
    model = load_flow_model(name, device=torch_device)
    ae = load_ae(name, device=torch_device)

    opts = SamplingOptions(prompt=prompt, width=width, height=height, num_steps=num_steps,
                           guidance=guidance, seed=seed)
    if opts.seed is None:
        opts.seed = torch.Generator(device="cpu").seed()
    print(f"Generating with seed {opts.seed}:\n{opts.prompt}")
    t0 = time.perf_counter()

    x = get_noise(1, opts.height, opts.width, device=torch_device, dtype=torch.bfloat16, seed=opts.seed)
    inp = prepare(t5, clip, x, prompt=opts.prompt)
    timesteps = get_schedule(opts.num_steps, inp["img"].shape[1], shift=(name != "flux-schnell"))

    # denoise initial noise
    x = denoise(model, **inp, timesteps=timesteps, guidance=opts.guidance)

    # decode latents to pixel space
    x = unpack(x.float(), opts.height, opts.width)
    with torch.autocast(device_type=torch_device.type, dtype=torch.bfloat16):
        x = ae.decode(x)

    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t1 = time.perf_counter()

    fn = output_name.format(idx=idx)
    print(f"Done in {t1 - t0:.1f}s. Saving {fn}")
    x = x.clamp(-1, 1)
    x = (127.5 * (x[0].permute(1, 2, 0) + 1.0)).byte().cpu().numpy()
    Image.fromarray(x).save(fn, quality=95)


def app():
    Fire(main)


if __name__ == "__main__":
    app()
