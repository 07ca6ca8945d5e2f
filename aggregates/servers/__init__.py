"""Servers: boots that schedule by aggregate metadata and claim placement."""
