class GraphModule(strata.nn.Module):
    def forward(self, primals_1: "f32[4194304]"):
        # File "/work/main/benchmarks/compile.py", line 43, in chain, code: 
        mul: "f32[4194304]" = strata.ops.aten.mul.Tensor(primals_1, 1.5)
        add: "f32[4194304]" = strata.ops.aten.add.Tensor(mul, 0.25, alpha = 1);  mul = None
        sigmoid: "f32[4194304]" = strata.ops.aten.sigmoid.default(add);  add = None
        # File "/work/main/benchmarks/compile.py", line 44, in chain, code: 
        mul_1: "f32[4194304]" = strata.ops.aten.mul.Tensor(sigmoid, primals_1);  sigmoid = None
        sub: "f32[4194304]" = strata.ops.aten.sub.Tensor(mul_1, 0.5, alpha = 1);  mul_1 = None
        abs_1: "f32[4194304]" = strata.ops.aten.abs.default(sub);  sub = None
        # File "/work/main/benchmarks/compile.py", line 45, in chain, code: 
        add_1: "f32[4194304]" = strata.ops.aten.add.Tensor(abs_1, 1.0, alpha = 1);  abs_1 = None
        log: "f32[4194304]" = strata.ops.aten.log.default(add_1);  add_1 = None
        mul_2: "f32[4194304]" = strata.ops.aten.mul.Tensor(log, 0.5);  log = None
        # File "/work/main/benchmarks/compile.py", line 46, in chain, code: 
        tanh: "f32[4194304]" = strata.ops.aten.tanh.default(mul_2);  mul_2 = None
        add_2: "f32[4194304]" = strata.ops.aten.add.Tensor(tanh, primals_1, alpha = 1);  primals_1 = tanh = None
        relu: "f32[4194304]" = strata.ops.aten.relu.default(add_2);  add_2 = None
        sub_1: "f32[4194304]" = strata.ops.aten.sub.Tensor(relu, 0.1, alpha = 1);  relu = None
        return (sub_1,)
