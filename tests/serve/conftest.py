"""Tests of ``scripts/serve.sh``: they start Debian's nginx (serve.sh installs it with apt when it
is missing, as scripts/test.sh does) in front of ``streamlit run`` replicas on free ports."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "nginx: needs Debian's nginx (scripts/test.sh installs it)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/serve" in str(item.fspath):
            item.add_marker(pytest.mark.nginx)
            item.add_marker(pytest.mark.slow)
