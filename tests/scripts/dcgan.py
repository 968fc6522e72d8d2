"""A small DCGAN after PyTorch's DCGAN tutorial, on scikit-learn's 8x8 digits scaled to [-1, 1]:
a generator of ConvTranspose2d + BatchNorm2d + ReLU ending in Tanh, a discriminator of Conv2d +
BatchNorm2d + LeakyReLU(0.2) ending in Sigmoid, BCELoss, two Adam optimizers with betas
(0.5, 0.999), weights_init applied by class name, fake.detach() for the discriminator step.
The latent noise comes from NumPy so both runs draw the same numbers."""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from sklearn.datasets import load_digits

nz, ngf, ndf = 8, 16, 16
init_rng = np.random.default_rng(0)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        w = init_rng.normal(0.0, 0.02, tuple(m.weight.shape)).astype(np.float32)
        m.weight.data.copy_(torch.from_numpy(w))
    elif classname.find("BatchNorm") != -1:
        w = init_rng.normal(1.0, 0.02, tuple(m.weight.shape)).astype(np.float32)
        m.weight.data.copy_(torch.from_numpy(w))
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),      # 1x1 -> 4x4
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),     # 4x4 -> 8x8
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 3, 1, 1, bias=False),           # 8x8 -> 8x8
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False),                    # 8x8 -> 4x4
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),              # 4x4 -> 2x2
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),                # 2x2 -> 1x1
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


def main():
    torch.manual_seed(999)
    digits = load_digits()
    real_images = torch.from_numpy((digits.images[:512] / 8.0 - 1.0).astype(np.float32))
    real_images = real_images.unsqueeze(1)

    netG = Generator()
    netG.apply(weights_init)
    netD = Discriminator()
    netD.apply(weights_init)
    print("generator parameters", sum(p.numel() for p in netG.parameters()),
          "discriminator parameters", sum(p.numel() for p in netD.parameters()))

    criterion = nn.BCELoss()
    noise_rng = np.random.default_rng(1)
    fixed_noise = torch.from_numpy(noise_rng.standard_normal((16, nz, 1, 1)).astype(np.float32))
    real_label, fake_label = 1.0, 0.0
    optimizerD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))

    batch_size = 64
    for epoch in range(2):
        for i, start in enumerate(range(0, len(real_images), batch_size)):
            # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
            netD.zero_grad()
            real_cpu = real_images[start:start + batch_size]
            b_size = real_cpu.size(0)
            label = torch.full((b_size,), real_label, dtype=torch.float)
            output = netD(real_cpu).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()

            noise = torch.from_numpy(
                noise_rng.standard_normal((b_size, nz, 1, 1)).astype(np.float32))
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            D_G_z1 = output.mean().item()
            errD = errD_real + errD_fake
            optimizerD.step()

            # (2) update G: maximize log(D(G(z)))
            netG.zero_grad()
            label.fill_(real_label)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            D_G_z2 = output.mean().item()
            optimizerG.step()
            if i % 4 == 3:
                print(f"[{epoch}/2][{i}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} "
                      f"D(x): {D_x:.4f} D(G(z)): {D_G_z1:.4f} / {D_G_z2:.4f}")

    bn = netG.main[1]
    print(f"running_mean {bn.running_mean.sum().item():.5f} "
          f"running_var {bn.running_var.sum().item():.5f} batches {bn.num_batches_tracked.item()}")
    netG.eval()
    with torch.no_grad():
        fake = netG(fixed_noise).detach().cpu()
    print("fixed samples", tuple(fake.shape), f"mean {fake.mean().item():.5f}",
          f"std {fake.std().item():.5f}", f"in range {bool((fake.abs() <= 1).all())}")


if __name__ == "__main__":
    main()
