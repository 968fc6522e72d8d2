"""Indexing ops: gather/scatter, index_select, advanced indexing (index, index_put_), masks."""
