"""Scheduling servers onto hosts by aggregate metadata, as Nova does:
placement pre-filters, host filters, weighers, and an explanation of every
host's fate."""
