"""Pytest plugins shared by every test folder (registered in tests/conftest.py
through ``pytest_plugins``): fixtures and helpers live here once, instead of
test modules importing them from each other."""
