"""The demo cloud: seeding and heartbeating."""
