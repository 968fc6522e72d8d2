"""Layer 1: what a tensor *is* — dtypes and promotion, devices, storage and TensorImpl."""
