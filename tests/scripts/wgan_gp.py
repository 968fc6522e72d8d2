"""A WGAN-GP (Gulrajani et al.) on scikit-learn's 8x8 digits, as the WGAN-GP tutorials write it:
a critic of Conv2d + InstanceNorm2d(affine) + LeakyReLU with no sigmoid, a generator of Linear +
BatchNorm1d + ConvTranspose2d, five critic steps per generator step, and the gradient penalty:
torch.autograd.grad of the critic's scores on real/fake interpolates with create_graph=True,
whose norm is pushed to 1, so the critic's update differentiates its own backward. Adam with
betas (0.0, 0.9). Noise and interpolation weights come from NumPy."""

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

LATENT = 8


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(LATENT, 16 * 4 * 4), nn.BatchNorm1d(16 * 4 * 4),
                                nn.ReLU())
        self.deconv = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.BatchNorm2d(8),
                                    nn.ReLU(), nn.Conv2d(8, 1, 3, 1, 1), nn.Tanh())

    def forward(self, z):
        return self.deconv(self.fc(z).view(-1, 16, 4, 4))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 8, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, 4, 2, 1), nn.InstanceNorm2d(16, affine=True), nn.LeakyReLU(0.2),
            nn.Flatten(), nn.Linear(16 * 2 * 2, 1))

    def forward(self, x):
        return self.net(x)


def gradient_penalty(critic, real, fake, alpha):
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interpolates)
    gradients = torch.autograd.grad(outputs=scores, inputs=interpolates,
                                    grad_outputs=torch.ones_like(scores), create_graph=True,
                                    retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def numpy_init(module, rng):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() > 1:
                p.copy_(torch.from_numpy(rng.normal(0, 0.1, tuple(p.shape)).astype(np.float32)))
            elif "bias" in name:
                p.zero_()


def main():
    torch.manual_seed(0)
    digits = load_digits()
    data = torch.from_numpy((digits.images[:256] / 8.0 - 1.0).astype(np.float32)).unsqueeze(1)
    generator, critic = Generator(), Critic()
    init_rng = np.random.default_rng(0)
    numpy_init(generator, init_rng)
    numpy_init(critic, init_rng)
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.0, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.0, 0.9))
    lambda_gp, n_critic, batch_size = 10.0, 5, 32
    rng = np.random.default_rng(1)

    for iteration in range(4):
        for _ in range(n_critic):
            real = data[rng.integers(0, len(data), batch_size)]
            z = torch.from_numpy(rng.standard_normal((batch_size, LATENT)).astype(np.float32))
            alpha = torch.from_numpy(rng.uniform(0, 1, (batch_size, 1, 1, 1)).astype(np.float32))
            fake = generator(z).detach()
            gp = gradient_penalty(critic, real, fake, alpha)
            wasserstein = critic(real).mean() - critic(fake).mean()
            loss_c = -wasserstein + lambda_gp * gp
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
        for p in critic.parameters():
            p.requires_grad_(False)
        z = torch.from_numpy(rng.standard_normal((batch_size, LATENT)).astype(np.float32))
        loss_g = -critic(generator(z)).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        for p in critic.parameters():
            p.requires_grad_(True)
        print(f"iter {iteration} critic {loss_c.item():.5f} W {wasserstein.item():.5f} "
              f"gp {gp.item():.5f} generator {loss_g.item():.5f}")

    grads = {name: p.grad for name, p in critic.named_parameters()}
    # InstanceNorm removes the conv bias: its gradient is rounding noise
    print("critic grads", sum(g is None for g in grads.values()), "missing;",
          "conv bias before InstanceNorm", bool(grads["net.2.bias"].abs().max() < 1e-3))
    generator.eval()
    with torch.no_grad():
        samples = generator(torch.from_numpy(rng.standard_normal((8, LATENT)).astype(np.float32)))
    print("samples", tuple(samples.shape), f"mean {samples.mean().item():.5f}",
          f"std {samples.std().item():.5f}")


if __name__ == "__main__":
    main()
