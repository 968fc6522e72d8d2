"""``nn.functional``: attention."""

from ...ops import dropout as DR

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v over the last two dims, with optional dropout on the
    attention weights; ``attn_mask`` is additive (float) or marks with True what may be attended
    (bool). See ``aten::scaled_dot_product_attention`` in ``ops/dropout.py``.

        >>> q = k = v = strata.randn(2, 4, 8)
        >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
        strata.Size([2, 4, 8])
    """
    return DR.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                           scale=scale, enable_gqa=enable_gqa)
