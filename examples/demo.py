"""strata's demo: the path of one line through every layer, then a model trained end to end.

1. `z = x + y`: its dispatch key set, the kernel table of `add.Tensor`, and the layers the line
   passes through (frontend -> dispatcher -> autograd -> kernel [-> runtime -> driver -> device
   -> sync on the `sim` accelerator]).
2. An MLP trained on scikit-learn's digits with a progress bar; a checkpoint is saved, training
   stops, resumes from the checkpoint, and finishes; the loss curve goes to demo_loss.png.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import digits, load_checkpoint, plot_losses, progress, save_checkpoint  # noqa: E402
from mlp_digits import MLP  # noqa: E402

import strata as torch  # noqa: E402


def show_one_line():
    x = torch.arange(6, dtype=torch.float32).view(2, 3)
    y = torch.ones(3, requires_grad=True)
    print("x =", x)
    print("y =", y)
    print("\nThe key set `z = x + y` dispatches on:", torch.dispatch.keyset(x, y))
    print("\nThe kernel table of add.Tensor (key -> kernel / fallthrough / missing):")
    torch.dispatch.dump("add.Tensor")
    if hasattr(torch, "explain"):
        print("\nThe path of `z = x + y` through the layers:")
        torch.explain(lambda: x + y)
        if hasattr(torch, "sim") and torch.sim.is_available():
            print("\n... and on the sim accelerator (a separate process):")
            xs, ys = x.to("sim"), y.detach().to("sim")
            torch.explain(lambda: (xs + ys).cpu())
    else:
        print("\nDispatch trace of `z = x + y`:")
        with torch.dispatch.show_trace():
            z = x + y
        print("z =", z)


def train(epochs_first=4, epochs_total=8, checkpoint=None, plot="demo_loss.png"):
    torch.manual_seed(0)
    (x, y), test = digits()
    model = MLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    checkpoint = checkpoint or os.path.join(tempfile.mkdtemp(), "mlp.ckpt")
    losses = []

    def run(start, stop):
        gen = torch.Generator().manual_seed(start)
        for epoch in range(start, stop):
            order = torch.randperm(len(x), generator=gen)
            for i in progress(range(0, len(x), 64), f"epoch {epoch + 1}/{epochs_total}", False):
                idx = order[i:i + 64]
                loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            save_checkpoint(checkpoint, model, optimizer, epoch, losses)

    print(f"\nTraining an MLP on digits for {epochs_first} epochs, checkpointing to {checkpoint}")
    run(0, epochs_first)
    print("Simulating a restart: a fresh model and optimizer resume from the checkpoint")
    model = MLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    start, history = load_checkpoint(checkpoint, model, optimizer)
    losses[:] = history
    run(start, epochs_total)
    model.eval()
    with torch.no_grad():
        acc = (model(test[0]).argmax(1) == test[1]).float().mean().item()
    print(f"MLP on digits: {len(losses)} steps, final loss {losses[-1]:.4f}, "
          f"test accuracy {acc * 100:.1f}%")
    plot_losses(plot, losses, "MLP on digits")
    return acc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=8, help="epochs in all (default 8)")
    parser.add_argument("--checkpoint", default=None,
                        help="checkpoint file (default: one in a new temporary folder)")
    parser.add_argument("--plot", default="demo_loss.png",
                        help="where the loss curve goes (needs matplotlib)")
    parser.add_argument("--skip-layers", action="store_true",
                        help="skip part 1 (the path of z = x + y) and only train")
    args = parser.parse_args(argv)
    if args.epochs < 2:
        parser.error("--epochs must be at least 2 (training stops and resumes half-way)")
    if not args.skip_layers:
        show_one_line()
    train(args.epochs // 2, args.epochs, args.checkpoint, args.plot)


if __name__ == "__main__":
    main()
