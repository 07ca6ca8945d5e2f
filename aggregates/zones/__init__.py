"""Availability zones, derived from aggregates' ``availability_zone`` key, and their API."""
