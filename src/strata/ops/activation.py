"""Activation-family ops: softmax, log_softmax and the nn activations, dropout."""
