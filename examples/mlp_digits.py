"""An MLP on scikit-learn's digits: 64 -> 128 -> 64 -> 10, Adam, cross-entropy (>= 95% test).

    python examples/mlp_digits.py --epochs 10 --checkpoint mlp.ckpt --plot mlp.png
"""

from common import digits, parse_args, train_classifier

import strata as torch
import strata.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                                 nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


def main():
    args = parse_args(__doc__, epochs=10, lr=3e-3)
    torch.manual_seed(args.seed)
    train, test = digits(args.device, seed=args.seed)
    model = MLP().to(args.device)
    train_classifier(model, train, test, args, "MLP on digits")


if __name__ == "__main__":
    main()
