"""The forward ops behind ``nn.functional``: convolution, pooling, normalisation, losses, ..."""
