import strata
from math import inf, nan  # noqa: F401
NoneType = type(None)


def forward(self, l_x):
    mul = l_x * 1.5
    add = mul + 0.25;  mul = None
    sigmoid = add.sigmoid();  add = None
    mul_1 = sigmoid * l_x;  sigmoid = None
    sub = mul_1 - 0.5;  mul_1 = None
    abs_1 = sub.abs();  sub = None
    add_1 = abs_1 + 1.0;  abs_1 = None
    log = add_1.log();  add_1 = None
    mul_2 = log * 0.5;  log = None
    tanh = mul_2.tanh();  mul_2 = None
    add_2 = tanh + l_x;  l_x = tanh = None
    relu = add_2.relu();  add_2 = None
    sub_1 = relu - 0.1;  relu = None
    return (sub_1,)


if __name__ == "__main__":
    print(forward(None, strata.randn((4194304,), dtype=strata.float32)))
