"""What the examples share: data, a tqdm training loop, checkpoints that resume, loss curves.

Written in plain PyTorch style: every example imports ``strata as torch`` and would run on real
PyTorch by changing that one line.
"""

import argparse
import math
import os

import numpy as np

import strata as torch


def parse_args(description, **defaults):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--epochs", type=int, default=defaults.get("epochs", 20))
    parser.add_argument("--steps", type=int, default=defaults.get("steps", 0),
                        help="stop after this many optimizer steps (0: no limit)")
    parser.add_argument("--lr", type=float, default=defaults.get("lr", 1e-3))
    parser.add_argument("--batch-size", type=int, default=defaults.get("batch_size", 64))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--checkpoint", default=defaults.get("checkpoint"),
                        help="save here after every epoch; resume from it if it exists")
    parser.add_argument("--plot", default=defaults.get("plot"),
                        help="write the loss curve to this PNG (needs matplotlib)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--compile", nargs="?", const="inductor", default=None,
                        metavar="BACKEND", help="train through torch.compile (default backend: "
                        "inductor; e.g. --compile eager, --compile aot_eager)")
    return parser.parse_args()


def digits(device="cpu", images=False, seed=0):
    """scikit-learn's 8x8 digits (shipped with the package): train/test tensors."""
    from sklearn.datasets import load_digits
    data = load_digits()
    x, y = data.data.astype(np.float32), data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    split = int(0.8 * len(x))
    # standardise with the training split's statistics: plain SGD-family training converges in a
    # few epochs on zero-mean, unit-scale inputs
    x = (x - x[:split].mean()) / x[:split].std()
    if images:
        x = x.reshape(-1, 1, 8, 8)
    to = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(device)  # noqa: E731
    return (to(x[:split]), to(y[:split])), (to(x[split:]), to(y[split:]))


def progress(iterable, desc, quiet, total=None):
    if quiet:
        return iterable
    from tqdm import tqdm
    return tqdm(iterable, desc=desc, total=total, leave=False)


def save_checkpoint(path, model, optimizer, epoch, losses):
    if path:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "epoch": epoch, "losses": losses}, path)


def load_checkpoint(path, model, optimizer):
    """Resume: returns (next epoch, loss history). The learning-rate schedule is not saved: see
    ``cosine_schedule``."""
    if not path or not os.path.exists(path):
        return 0, []
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    print(f"resumed from {path}: {len(state['losses'])} steps done")
    return state["epoch"] + 1, list(state["losses"])


def cosine_schedule(optimizer, total_steps, steps_done):
    """Cosine decay from the initial lr to 0 over ``total_steps``, continuing after
    ``steps_done`` steps. LambdaLR computes each lr in closed form from the ``initial_lr`` kept
    in the optimizer's state, so a resumed run (even one extended to more steps than first
    planned) picks up the right rate; CosineAnnealingLR's recursive form would continue from
    the rate saved in the checkpoint instead (0 at the end of a finished run)."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * min(step, total_steps)
                                                    / total_steps)),
        last_epoch=steps_done - 1)


def plot_losses(path, losses, title):
    if not path:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no loss curve written")
        return
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(losses)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_title(title)
    ax.set_yscale("log")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"loss curve: {path}")


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    model.train()
    return (pred == y).float().mean().item()


def compiled(model, args):
    """``model`` itself, or ``torch.compile(model, backend=...)`` with ``--compile``."""
    return torch.compile(model, backend=args.compile) if args.compile else model


def train_classifier(model, train, test, args, title):
    """Mini-batch Adam with a cosine learning-rate decay on cross-entropy; checkpoint every
    epoch; returns test accuracy."""
    x, y = train
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    start, losses = load_checkpoint(args.checkpoint, model, optimizer)
    scheduler = cosine_schedule(optimizer, args.epochs * math.ceil(len(x) / args.batch_size),
                                len(losses))
    generator = torch.Generator()
    forward = compiled(model, args)
    steps = 0
    for epoch in range(start, args.epochs):
        # one seed per epoch: a resumed run sees the same batches as an uninterrupted one
        generator.manual_seed(args.seed * 1000 + epoch)
        order = torch.randperm(len(x), generator=generator).to(x.device)
        batches = range(0, len(x), args.batch_size)
        for i in progress(batches, f"epoch {epoch + 1}/{args.epochs}", args.quiet):
            idx = order[i:i + args.batch_size]
            loss = torch.nn.functional.cross_entropy(forward(x[idx]), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            steps += 1
            if args.steps and steps >= args.steps:
                break
        save_checkpoint(args.checkpoint, model, optimizer, epoch, losses)
        if args.steps and steps >= args.steps:
            break
    acc = accuracy(model, *test)
    print(f"{title}: {len(losses)} steps, final loss {losses[-1]:.4f}, "
          f"test accuracy {acc * 100:.1f}%")
    plot_losses(args.plot, losses, title)
    return acc
