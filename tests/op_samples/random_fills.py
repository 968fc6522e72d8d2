"""Sample inputs for the ops of ``ops/random_fills.py`` (random values: shape, dtype and strides
only). Errors, distributions and autograd live in tests/test_random_fills.py."""

import numpy as np

from . import Sample

VALUES = np.array([[0.0, -1.75, 2.5, 300.25], [-0.0, 1e-3, 65504.0, -7.0]])
PROBS = np.array([0.0, 0.25, 0.5, 1.0])


def R(fn, *inputs, name=""):
    return Sample(fn, inputs or (VALUES,), name=name, random=True)


SAMPLES = {
    "aten::random_.from": [R(lambda m, x: x.random_(-3, 5), name="float"),
                           R(lambda m, x: x.to(m.int8).random_(-3, None), name="int8 to max"),
                           R(lambda m, x: x.to(m.int64).t().random_(-2 ** 63, None),
                             name="int64 full range")],
    "aten::random_.to": [R(lambda m, x: x.random_(10), name="float"),
                         R(lambda m, x: x.to(m.uint8).random_(256), name="uint8")],
    "aten::random_": [R(lambda m, x: x.random_(), name="float"),
                      R(lambda m, x: x.to(m.bool).t().random_(), name="bool"),
                      R(lambda m, x: x.to(m.float16).random_(), name="half")],
    "aten::bernoulli_.float": [R(lambda m, x: x.bernoulli_(), name="float"),
                               R(lambda m, x: x.to(m.int32).t().bernoulli_(0.3), name="int")],
    "aten::bernoulli_.Tensor": [R(lambda m, x, p: x.bernoulli_(p), VALUES, PROBS,
                                  name="broadcast"),
                                R(lambda m, x, p: x.to(m.bool).bernoulli_(p.double()), VALUES,
                                  PROBS, name="bool")],
    "aten::exponential_": [R(lambda m, x: x.exponential_(3.0), name="float"),
                           R(lambda m, x: x.to(m.bfloat16).t().exponential_(), name="bfloat16")],
    "aten::geometric_": [R(lambda m, x: x.geometric_(0.2), name="float"),
                         R(lambda m, x: x.to(m.int16).geometric_(0.7), name="int16")],
    "aten::cauchy_": [R(lambda m, x: x.cauchy_(1.0, 0.5), name="float"),
                      R(lambda m, x: x.double().t().cauchy_(), name="double")],
    "aten::log_normal_": [R(lambda m, x: x.log_normal_(), name="float"),
                          R(lambda m, x: x.half().log_normal_(0.0, 0.25), name="half")],
}
