"""A variational autoencoder on scikit-learn's 8x8 digits, as in PyTorch's examples/vae: an MLP
encoder to (mu, logvar), the reparameterisation trick, a sigmoid decoder, BCE + KL loss summed
over the batch, Adam. The noise of the reparameterisation comes from NumPy so both runs draw the
same numbers; torch.randn_like is still called to check what it returns."""

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn, optim


class VAE(nn.Module):
    def __init__(self, pixels=64, hidden=48, latent=6):
        super().__init__()
        self.fc1 = nn.Linear(pixels, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, pixels)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld, bce, kld


def main():
    torch.manual_seed(1)
    digits = load_digits()
    images = torch.from_numpy((digits.images / 16.0).astype(np.float32)).unsqueeze(1)
    print("data", tuple(images.shape), images.dtype, f"{images.max().item():.1f}")

    model = VAE()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            scale = 1.0 / np.sqrt(p.shape[-1]) if p.dim() == 2 else 0.05
            p.copy_(torch.from_numpy(rng.uniform(-scale, scale, tuple(p.shape)).astype("f4")))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)

    noise = np.random.default_rng(1)
    batch_size = 128
    for epoch in range(3):
        model.train()
        train_loss = 0.0
        for start in range(0, 768, batch_size):
            data = images[start:start + batch_size]
            eps = torch.from_numpy(noise.standard_normal((len(data), 6)).astype(np.float32))
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data, eps)
            loss, bce, kld = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
        print(f"epoch {epoch} loss {train_loss / 768:.4f} last bce {bce.item():.3f} "
              f"kld {kld.item():.4f}")

    model.eval()
    with torch.no_grad():
        test = images[768:1024]
        mu, logvar = model.encode(test.view(-1, 64))
        recon = model.decode(mu)
        test_loss = loss_function(recon, test, mu, logvar)[0].item() / len(test)
        print(f"test loss {test_loss:.4f} mean sigma {torch.exp(0.5 * logvar).mean():.4f}")
        z = torch.from_numpy(noise.standard_normal((4, 6)).astype(np.float32))
        sample = model.decode(z).view(4, 1, 8, 8)
        print("sample", tuple(sample.shape), f"{sample.sum().item():.3f}",
              f"min {sample.min().item():.4f} max {sample.max().item():.4f}")
        drawn = torch.randn_like(mu)
        print("randn_like", tuple(drawn.shape), drawn.dtype, drawn.requires_grad,
              bool(torch.isfinite(drawn).all()))
    print("grad of fc1", tuple(model.fc1.weight.grad.shape),
          f"{model.fc1.weight.grad.abs().sum().item():.4f}")


if __name__ == "__main__":
    main()
