"""``strata.fx.experimental``, as ``torch.fx.experimental``."""
