"""The audit log of every operation."""
