"""Fold an eval-mode BatchNorm into the convolution or linear layer before it
(``torch/nn/utils/fusion.py``): one layer computing ``bn(conv(x))``."""

import copy

from ...autograd.grad_mode import no_grad
from ..parameter import Parameter


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused (weight, bias): ``w * gamma / sqrt(var + eps)`` per output channel, and
    ``(b - mean) * gamma / sqrt(var + eps) + beta``."""
    dtype = conv_w.dtype
    if conv_b is None:
        conv_b = bn_rm.new_zeros(bn_rm.shape)
    if bn_w is None:
        bn_w = bn_rm.new_ones(bn_rm.shape)
    if bn_b is None:
        bn_b = bn_rm.new_zeros(bn_rm.shape)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    shape = [1] * conv_w.ndim
    shape[1 if transpose else 0] = -1
    fused_w = (conv_w * scale.reshape(shape)).to(dtype)
    fused_b = ((conv_b - bn_rm) * scale + bn_b).to(dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    with no_grad():
        fused.weight, fused.bias = fuse_conv_bn_weights(
            fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
            bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    if linear_b is None:
        linear_b = bn_rm.new_zeros(bn_rm.shape)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or "
                             "bn.num_features must equal 1")
    fused = copy.deepcopy(linear)
    with no_grad():
        fused.weight, fused.bias = fuse_linear_bn_weights(
            fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
