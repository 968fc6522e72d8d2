"""A module imports only from its own layer or the layers listed above it in DESIGN.md.

Where a lower layer must reach a higher one (Tensor.backward -> the autograd engine), the higher
layer registers itself at import time instead of being imported; this test catches any import,
including ones inside functions.
"""

import ast
import pathlib

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "strata"

# Top to bottom, as DESIGN.md lists the layers. Names are first path components under strata/.
LAYERS = [
    {"config", "version"},
    {"core"},
    {"ops"},
    {"dispatch"},
    {"_tensor", "tensor_operators", "tensor_conversion", "tensor_methods", "creation",
     "creation_args", "tensor_new", "frontend", "tensor_str", "random", "functions",
     "library", "return_types", "linalg", "fft", "special", "testing"},
    {"autograd"},
    {"runtime"},
    {"backends"},
    {"nn", "optim", "utils", "serialization", "distributions", "distributed", "onnx", "jit", "amp",
     "sparse", "func", "_higher_order_ops",
     "cuda", "accelerator", "sim", "opencl", "multiprocessing"},
    {"compile", "fx", "_dynamo", "compiler", "_functorch"},
    {"profiler"},
    {"cli", "torch_alias", "__init__", "__main__"},
]


def layer_of(component: str) -> int:
    for i, names in enumerate(LAYERS):
        if component in names:
            return i
    raise AssertionError(f"strata/{component} is in no layer: add it to DESIGN.md and LAYERS")


def _component(path: pathlib.Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imported_components(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    package = path.relative_to(SRC).parent.parts
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                parts = list(base) + (node.module.split(".") if node.module else [])
                if not parts:  # `from . import x` at the top of the package
                    parts = [alias.name for alias in node.names]
                    for p in parts:
                        yield node.lineno, p
                    continue
                yield node.lineno, parts[0]
            elif node.module and node.module.split(".")[0] == "strata":
                parts = node.module.split(".")
                yield node.lineno, parts[1] if len(parts) > 1 else node.names[0].name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "strata" and len(parts) > 1:
                    yield node.lineno, parts[1]


def test_every_module_imports_only_upwards():
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        mine = layer_of(_component(path))
        for lineno, comp in _imported_components(path):
            if comp == _component(path):
                continue
            theirs = layer_of(comp.removesuffix(".py"))
            if theirs > mine:
                problems.append(f"{path.relative_to(SRC)}:{lineno} imports {comp} "
                                f"(layer {theirs} is below layer {mine})")
    assert not problems, "\n".join(problems)


def test_src_never_imports_torch():
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "torch" for n in names), path
