"""Flavors with extra specs and project access, and their API."""
