"""The differential suite's functions (tests/compile/test_differential.py runs them), and the
registry every case joins. Each case is written once against a ``torch`` namespace argument, so
the same source runs on strata and on PyTorch."""

CASES = {}
COUNTED = set()   # cases whose graph/break counts are compared with Dynamo's


def case(counted=True, grad=True, skips=False):
    """``skips``: capture gives up on the whole frame (runs it eagerly), as Dynamo does."""
    def register(build):
        build.grad = grad
        build.skips = skips
        CASES[build.__name__] = build
        if counted:
            COUNTED.add(build.__name__)
        return build
    return register


# --- functions ------------------------------------------------------------------------------------
@case()
def arith(torch):
    return (lambda x, y: x * 2 + y / 3 - x * y), [(3, 4), (3, 4)]


@case()
def unary_math(torch):
    return (lambda x: torch.exp(x).log1p() + torch.tanh(x) * torch.sigmoid(x)), [(5,)]


@case()
def reductions(torch):
    def f(x):
        return x.sum(0) + x.mean(dim=0) * x.amax(0), x.var(), x.max(dim=1).values
    return f, [(3, 4)]


@case()
def matmul_bias(torch):
    return (lambda x, w, b: x @ w + b), [(2, 3), (3, 4), (4,)]


@case()
def softmaxes(torch):
    F = torch.nn.functional
    return (lambda x: F.softmax(x, dim=-1) + F.log_softmax(x, dim=0)), [(3, 4)]


@case()
def views(torch):
    def f(x):
        y = x.view(4, 3).t().contiguous()
        return y.reshape(-1)[2:8], x.permute(1, 0).unsqueeze(0).squeeze(0), x.transpose(0, 1)
    return f, [(3, 4)]


@case()
def indexing(torch):
    return (lambda x: x[:, 1:] * 2 + x[..., -1:] - x[0, 1:]), [(3, 4)]


@case()
def cat_stack(torch):
    return (lambda x, y: torch.cat([x, y], dim=0).sum(1) + torch.stack((x, y)).mean((0, 2))
            .repeat(2)), [(2, 3), (2, 3)]


@case()
def split_chunk(torch):
    def f(x):
        a, b = x.split(2, dim=1)
        c = x.chunk(2, dim=0)
        return a * b, c[0] + c[1]
    return f, [(4, 4)]


@case()
def where_clamp(torch):
    return (lambda x: torch.where(x > 0, x, x * 0.1).clamp(-0.5, 0.5)), [(6,)]


@case()
def broadcasting(torch):
    return (lambda x, y: (x + y) * (x - y).abs()), [(3, 1), (1, 4)]


@case(grad=False)
def inplace_on_input(torch):
    def f(x):
        x.add_(1)
        x.mul_(2)
        return x.sum()
    return f, [(3,)]


@case(grad=False)
def inplace_on_view(torch):
    def f(x):
        v = x[0]
        v.fill_(3.0)
        x[1] = 7.0
        return x * 1
    return f, [(2, 3)]


@case()
def inplace_on_intermediate(torch):
    def f(x):
        y = x * 2
        y.mul_(3)
        y += 1
        return y
    return f, [(4,)]


@case()
def closure(torch):
    scale = 3.0

    def inner(y):
        return y * scale

    return (lambda x: inner(x) + inner(x * 2)), [(3,)]


@case()
def nested_def_closure(torch):
    def f(x):
        k = 2

        def g(y):
            return y ** k
        return g(x) + g(x + 1)
    return f, [(3,)]


@case()
def nonlocal_counter(torch):
    def f(x):
        total = x * 0

        def add(y):
            nonlocal total
            total = total + y
        add(x)
        add(x * 2)
        return total
    return f, [(3,)]


@case()
def kwargs_call(torch):
    def g(x, *, alpha=1.0, beta=2.0):
        return x * alpha + beta

    return (lambda x: g(x, beta=0.5) + g(x, alpha=3.0)), [(3,)]


@case()
def star_args(torch):
    def g(*args, **kwargs):
        out = args[0]
        for a in args[1:]:
            out = out + a
        return out * kwargs.get("scale", 1.0)

    return (lambda x, y: g(x, y, x, scale=2.0)), [(3,), (3,)]


@case()
def default_args(torch):
    def f(x, n=3, bias=None):
        return x * n if bias is None else x + bias
    return f, [(3,)]


@case()
def list_comprehension(torch):
    return (lambda x: sum([x * i for i in range(4)])), [(3,)]


@case()
def dict_output(torch):
    return (lambda x: {"double": x * 2, "square": x * x, "n": 3}), [(3,)]


@case()
def namedtuple_and_size(torch):
    import collections
    pair = collections.namedtuple("Pair", "a b")

    def f(x):
        p = pair(x * 2, b=x + 1)
        return p.a + p.b, x.view(torch.Size([x.shape[0], 1]))
    return f, [(3,)]


@case()
def tuple_unpack(torch):
    def f(x, y):
        a, (b, c) = x, (y, x + y)
        *rest, last = [a, b, c]
        return last * rest[0]
    return f, [(3,), (3,)]


@case()
def loop_range(torch):
    def f(x):
        for i in range(3):
            x = x * 0.5 + i
        return x
    return f, [(3,)]


@case()
def loop_list_of_tensors(torch):
    def f(xs):
        total = 0
        for t in xs:
            total = total + t.sum()
        return total
    return f, [[(3,), (2,), (4,)]]


@case()
def enumerate_zip(torch):
    def f(x, y):
        out = []
        for i, (a, b) in enumerate(zip([x, y], [y, x])):
            out.append(a * i + b)
        return out
    return f, [(3,), (3,)]


@case()
def early_return(torch):
    def f(x, flag=True):
        if flag:
            return x + 1
        return x - 1
    return f, [(3,)]


@case()
def try_except(torch):
    def f(x):
        try:
            y = x * 2
        except RuntimeError:
            y = x
        return y + 1
    return f, [(3,)]


@case()
def break_print(torch):
    def f(x):
        y = x.sin()
        print("between graphs", end="\r")
        return y.cos()
    return f, [(3,)]


@case()
def break_item(torch):
    def f(x):
        n = x.sum().item()
        return x * n
    return f, [(3,)]


@case()
def break_if_tensor(torch):
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1
    return f, [(3,)]


@case()
def break_tolist(torch):
    def f(x):
        values = x.tolist()
        return x * len(values)
    return f, [(3,)]


@case(skips=True)
def break_in_loop(torch):
    def f(x):
        for i in range(3):
            x = x + 1
            if x.sum() > 100:
                break
        return x
    return f, [(3,)]


@case()
def break_in_no_grad_block(torch):
    def f(x):
        a = x * 3
        with torch.no_grad():
            y = x * 2
            print("inside no_grad", end="\r")
            z = y + 1
        return a + z, a * z.requires_grad
    return f, [(3,)]


@case()
def break_in_callee(torch):
    def g(y):
        y = y * 3
        print("in callee", end="\r")
        return y + 1

    return (lambda x: g(x * 2) - 1), [(3,)]


GLOBAL_SCALE = 2.5


@case()
def global_read(torch):
    def f(x):
        return x * GLOBAL_SCALE
    return f, [(3,)]


@case()
def list_append_side_effect(torch):
    log = []

    def f(x):
        log.append(x.sum())
        return x * 2, len(log) > 0
    return f, [(3,)]


@case()
def no_grad_block(torch):
    def f(x):
        with torch.no_grad():
            y = x * 2
        return x * y
    return f, [(3,)]


@case()
def enable_grad_block(torch):
    def f(x):
        with torch.no_grad():
            with torch.enable_grad():
                y = x * 3
        return y
    return f, [(3,)]


@case()
def autocast_block(torch):
    lin = torch.nn.Linear(4, 4)

    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = lin(x)
        return y.float() * 2
    return f, [(2, 4)]


@case()
def custom_autograd_function(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    return (lambda x: Square.apply(x) + 1), [(3,)]


@case()
def builtins_symbolic(torch):
    def f(x, ys):
        n = len(ys) + min(2, 3) + max([1, 4])
        if isinstance(x, torch.Tensor) and hasattr(x, "shape"):
            n += 1
        return x * n + getattr(x, "T").sum()
    return f, [(3,), [(1,), (1,)]]


@case()
def shape_arith(torch):
    return (lambda x: x.view(x.shape[0] * x.size(1), -1).sum(0) + x.numel()), [(2, 3, 4)]


@case()
def creation_ops(torch):
    return (lambda x: x + torch.zeros(3) + torch.ones_like(x) * torch.arange(3)), [(3,)]


@case()
def comparisons_logic(torch):
    return (lambda x, y: ((x > y) & (x < 2) | ~(y > 0)).float() * x), [(5,), (5,)]


@case()
def string_format(torch):
    def f(x):
        key = f"k{x.dim()}"
        table = {"k1": 2.0, "k2": 3.0}
        return x * table[key]
    return f, [(3,)]


@case()
def method_chain(torch):
    return (lambda x: x.abs().sqrt().neg().exp().sum(-1, keepdim=True)), [(2, 3)]


@case()
def dropout_fn(torch):
    F = torch.nn.functional
    return (lambda x: F.dropout(x, 0.5, training=True)), [(64,)]
