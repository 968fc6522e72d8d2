"""Corners an audit of issue 9's cache rules found, each as a user meets them: a cache root
that strata creates (``STRATA_CACHE_DIR`` or ``~/.cache/strata``) is mode 0700 as well as the
folders in it; a root that already exists is left as it is."""

import stat

from strata import config
from strata.backends.cpu import native


def test_a_cache_root_strata_creates_is_private(tmp_path, monkeypatch):
    root = tmp_path / "home" / ".cache" / "strata"
    monkeypatch.setattr(config, "cache_dir", str(root))
    folder = native.cache_folder("native")
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_an_existing_cache_root_keeps_its_mode(tmp_path, monkeypatch):
    tmp_path.chmod(0o755)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    folder = native.cache_folder("fxgraph")
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
