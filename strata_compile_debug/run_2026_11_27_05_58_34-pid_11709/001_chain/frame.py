def ___frame(L, G, ___inputs):
    ___outs = ___graph(*___inputs)
    return ___outs[0]
