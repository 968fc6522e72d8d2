"""``strata._functorch``, as ``torch._functorch``: re-exports of strata.compile.aot."""
