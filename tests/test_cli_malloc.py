"""The program keeps freed memory with glibc's malloc, unless the user tunes malloc."""

from __future__ import annotations

import platform

import pytest

from placelint.cli import _MALLOC_ENV, tune_malloc

glibc = platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="mallopt is glibc's")
def test_glibc_malloc_is_told_to_keep_freed_memory(monkeypatch):
    for name in _MALLOC_ENV:
        monkeypatch.delenv(name, raising=False)
    assert tune_malloc() is True


@pytest.mark.parametrize("name", _MALLOC_ENV)
def test_a_user_s_malloc_settings_win(monkeypatch, name):
    monkeypatch.setenv(name, "1048576" if name != "GLIBC_TUNABLES" else "glibc.malloc.trim_threshold=1")
    assert tune_malloc() is False
