"""A small CNN on scikit-learn's 8x8 digits: two conv + max-pool blocks, then a linear layer.

    python examples/cnn_digits.py --epochs 10 --checkpoint cnn.ckpt --plot cnn.png
"""

from common import digits, parse_args, train_classifier

import strata as torch
import strata.nn as nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 16 x 4 x 4
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 32 x 2 x 2
        )
        self.classifier = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def main():
    args = parse_args(__doc__, epochs=10, lr=3e-3)
    torch.manual_seed(args.seed)
    train, test = digits(args.device, images=True, seed=args.seed)
    model = CNN().to(args.device)
    train_classifier(model, train, test, args, "CNN on digits")


if __name__ == "__main__":
    main()
