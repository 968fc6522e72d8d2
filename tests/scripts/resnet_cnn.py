"""A ResNet-style CNN on scikit-learn's 8x8 digits, the way CIFAR tutorials write one: BasicBlock
(conv3x3-BN-ReLU-conv3x3-BN plus an identity or 1x1-conv shortcut), AdaptiveAvgPool2d +
flatten, CrossEntropyLoss with label smoothing, SGD with Nesterov momentum and weight decay
(no decay on BatchNorm and bias parameters, via parameter groups), OneCycleLR stepped per batch,
gradient clipping, model.train()/model.eval() and accuracy under torch.no_grad()."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1,
                               bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride,
                          bias=False),
                nn.BatchNorm2d(self.expansion * planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=10):
        super().__init__()
        self.in_planes = 8
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = self._make_layer(block, 8, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 16, num_blocks[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.linear = nn.Linear(16 * block.expansion, num_classes)

    def _make_layer(self, block, planes, num_blocks, stride):
        layers = []
        for s in [stride] + [1] * (num_blocks - 1):
            layers.append(block(self.in_planes, planes, s))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        out = torch.flatten(self.avgpool(out), 1)
        return self.linear(out)


def numpy_init(model, seed=0):
    rng = np.random.default_rng(seed)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            fan_out = m.out_channels * m.kernel_size[0] * m.kernel_size[1]
            w = rng.normal(0, np.sqrt(2.0 / fan_out), tuple(m.weight.shape))
            m.weight.data = torch.from_numpy(w.astype(np.float32))
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.Linear):
            bound = 1 / np.sqrt(m.in_features)
            with torch.no_grad():
                m.weight.copy_(torch.from_numpy(
                    rng.uniform(-bound, bound, tuple(m.weight.shape)).astype(np.float32)))
                m.bias.zero_()


def evaluate(model, x, y, batch_size=100):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for i in range(0, len(x), batch_size):
            outputs = model(x[i:i + batch_size])
            _, predicted = torch.max(outputs.data, 1)
            total += y[i:i + batch_size].size(0)
            correct += (predicted == y[i:i + batch_size]).sum().item()
    return 100.0 * correct / total


def main():
    torch.manual_seed(42)
    digits = load_digits()
    images = (digits.images / 16.0 - 0.5) / 0.5
    x = torch.tensor(images[:, None], dtype=torch.float32)
    y = torch.as_tensor(digits.target, dtype=torch.long)
    x_train, y_train, x_test, y_test = x[:384], y[:384], x[1500:1700], y[1500:1700]

    model = ResNet(BasicBlock, [1, 1])
    numpy_init(model)
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if param.ndim <= 1 else decay).append(param)
    print("parameters", sum(p.numel() for p in model.parameters() if p.requires_grad),
          "decayed tensors", len(decay), "undecayed", len(no_decay))

    epochs, batch_size = 3, 64
    steps_per_epoch = len(x_train) // batch_size
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=0.05, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=0.1, epochs=epochs, steps_per_epoch=steps_per_epoch)
    print(f"accuracy before training {evaluate(model, x_test, y_test):.1f}")

    for epoch in range(epochs):
        model.train()
        running_loss, running_norm, correct = 0.0, 0.0, 0
        for i in range(steps_per_epoch):
            inputs = x_train[i * batch_size:(i + 1) * batch_size]
            targets = y_train[i * batch_size:(i + 1) * batch_size]
            optimizer.zero_grad(set_to_none=True)
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
            optimizer.step()
            scheduler.step()
            running_loss += loss.item()
            running_norm += grad_norm.item()
            correct += outputs.argmax(1).eq(targets).sum().item()
        print(f"epoch {epoch} loss {running_loss / steps_per_epoch:.4f} "
              f"train acc {100.0 * correct / len(x_train):.2f} "
              f"mean grad norm {running_norm / steps_per_epoch:.4f} "
              f"lr {scheduler.get_last_lr()[0]:.6f}")
    print(f"test accuracy {evaluate(model, x_test, y_test):.1f} training {model.training}")
    print(f"bn1 running_var {model.bn1.running_var.mean().item():.5f}",
          f"fc weight norm {model.linear.weight.norm().item():.5f}")


if __name__ == "__main__":
    main()
