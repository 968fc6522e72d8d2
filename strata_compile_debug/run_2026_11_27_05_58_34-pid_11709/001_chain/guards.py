def ___guard(L, G):
    try:
        if not (___tls.grad_enabled is True and ___tls.include == 0 and ___tls.exclude == 0 and ___default_dtype() is ___c2):
            return None
        v0 = L['x']
        if not ((type(v0), v0._keyset, v0.dtype, v0.device, v0.requires_grad, v0._shape, v0._strides or (1,)) == ___c6):
            return None
        return (v0, )
    except Exception:
        return None

# guards:
#   ___tls.grad_enabled is True and ___tls.include == 0 and ___tls.exclude == 0 and ___default_dtype() is strata.float32
#   (type(L['x']), L['x']._keyset, L['x'].dtype, L['x'].device, L['x'].requires_grad, L['x']._shape, L['x']._strides or (1,)) == (<class 'strata._tensor.Tensor'>, 3105, strata.float32, d...
