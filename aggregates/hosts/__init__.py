"""Compute hosts: services, compute nodes, registration, and their APIs."""
