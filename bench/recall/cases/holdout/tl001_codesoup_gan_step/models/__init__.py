from .gan import GAN, Discriminator, Generator
