"""strata's demo: a few tensors, a few ops, and the dispatch trace of one line, `z = x + y`."""

import strata as torch

x = torch.arange(6, dtype=torch.float32).view(2, 3)
y = torch.ones(3)
print("x =", x)
print("y =", y)
print("x.t() shares storage with x:", x.t().data_ptr() == x.data_ptr())
print("(x * 2).sum(dim=1) =", (x * 2).sum(dim=1))
print("result_type(int32 tensor, 2.5) =",
      torch.result_type(torch.ones(2, dtype=torch.int32), 2.5))

print("\nThe key set `z = x + y` dispatches on:", torch.dispatch.keyset(x, y))
print("\nDispatch table of add.Tensor:")
torch.dispatch.dump("add.Tensor")
print("\nDispatch trace of `z = x + y`:")
with torch.dispatch.show_trace():
    z = x + y
print("z =", z)

print("\nThe same program on the meta device (shapes and dtypes, no data):")
m = torch.empty(1024, 4096, device="meta")
print((m @ torch.empty(4096, 10, device="meta")).shape if hasattr(torch, "matmul")
      else (m + 1).shape)
