"""The adversarial suite's case count is reported by tests/conftest.py."""
