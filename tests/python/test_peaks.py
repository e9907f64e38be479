"""The device's peaks without a GPU: where its file is cached (by the device's name, under
XDG_CACHE_HOME), and that nothing is measured or written here (the engine's entry point raises,
the command exits 2)."""

import os

import pytest

from tforge_worker import peaks


def test_cached_by_name_under_the_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert peaks.cache_path("NVIDIA H100 80GB HBM3") == \
        os.path.join(str(tmp_path), "tforge", "devices", "NVIDIA_H100_80GB_HBM3.json")
    assert peaks.cache_path("a/b:c") == os.path.join(str(tmp_path), "tforge", "devices",
                                                      "a_b_c.json")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert peaks.cache_path("x").startswith(os.path.join(os.path.expanduser("~"), ".cache"))


def test_without_a_gpu_nothing_is_measured(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(RuntimeError, match="no CUDA device"):
        peaks.cached()
    assert peaks.main(["--out", str(tmp_path / "d.json")]) == 2
    assert "no CUDA device" in capsys.readouterr().err
    assert not any(tmp_path.rglob("*.json"))
