"""Loss ops (mse, l1, smooth_l1, nll, cross_entropy, bce, kl_div, ...)."""
