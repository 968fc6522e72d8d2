"""The OpenCL device's linear algebra that runs on the host: ``linalg_eig`` (so
``linalg.eigvals`` and both gradients) and ``linalg_solve`` of complex matrices (the eig
gradient's last step), through the CPU device's LAPACK, as PyTorch's CUDA backend runs ``geev``.

Note [Linear algebra on the host]: a general matrix's eigenvalues come from the Hessenberg QR
algorithm with shifts and deflation, a long serial iteration per matrix, and its eigenvectors
are normalised by conventions (unit norm, largest component real) that only the same LAPACK
routine reproduces. PyTorch's CUDA ``linalg_eig`` runs MAGMA's ``geev``, which has no GPU
interface: it copies the input to the host, runs there and copies the results back
(aten/src/ATen/native/BatchLinearAlgebra.cpp, ``linalg_eig_out_info``). The OpenCL device does
the same: the input is read on the host (a sync point, which also raises any device-side assert
pending on the stream), the CPU device's kernel computes the result with its errors (a NaN or
inf raises ``torch.linalg.eig``'s ``RuntimeError``, a singular matrix ``linalg.solve``'s
``LinAlgError``), and the result is copied to the device. So eigenvalues and eigenvectors equal
the CPU device's, order and phases included. The device's own LU kernels (opencl_linalg.py) are
real-only: a complex ``solve`` comes here too rather than through them.
"""

from ...ops import factorizations as LF


def linalg_eig(self):
    """(eigenvalues, eigenvectors), complex, on ``self``'s device."""
    LF.linalg_eig.meta(self)
    values, vectors = LF.linalg_eig(self.cpu())
    return values.to(self.device), vectors.to(self.device)


def linalg_solve(A, B, left=True):
    """X with A X = B (X A = B when not ``left``) for complex operands (opencl_linalg.py's
    ``linalg_solve`` has run the meta function)."""
    return LF.linalg_solve(A.cpu(), B.cpu(), left).to(A.device)


KERNELS = {LF.linalg_eig: linalg_eig}
