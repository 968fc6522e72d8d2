"""``strata.fx.passes``, as ``torch.fx.passes``: re-exports of strata.compile.fx.passes."""
