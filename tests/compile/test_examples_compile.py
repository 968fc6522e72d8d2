"""``--compile`` in the examples: training through strata.compile reaches the same loss and
accuracy as eager (same seed, same batches)."""

import argparse
import os
import sys

import pytest

import strata

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _train(module_name, backend):
    pytest.importorskip("sklearn")
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    common, example = __import__("common"), __import__(module_name)
    args = argparse.Namespace(epochs=1, steps=12, lr=3e-3, batch_size=64, device="cpu",
                              checkpoint=None, plot=None, seed=0, quiet=True, compile=backend)
    strata.manual_seed(0)
    strata._dynamo.reset()
    train, test = common.digits(images=module_name == "cnn_digits")
    model = example.MLP() if module_name == "mlp_digits" else example.CNN()
    accuracy = common.train_classifier(model, train, test, args, module_name)
    return accuracy, [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("module_name, backend", [("mlp_digits", "eager"),
                                                  ("cnn_digits", "aot_eager")])
def test_compiled_training_matches_eager(module_name, backend):
    eager_acc, eager_params = _train(module_name, None)
    acc, params = _train(module_name, backend)
    assert acc == eager_acc
    for p, e in zip(params, eager_params):
        assert strata.allclose(p, e, atol=1e-5)
