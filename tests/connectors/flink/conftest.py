"""PyFlink connector tests: quiet the deprecation warnings PyFlink's imports raise."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("filterwarnings", r"ignore:.*deprecated since version 2\.:DeprecationWarning")
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:httplib2")  # via apache-beam
