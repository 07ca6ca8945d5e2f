"""Addresses without a networking service: operator-defined pools, one address per server and pool."""
