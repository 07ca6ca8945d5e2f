"""Capacity by flavor: how many more servers of each flavor fit, per zone and aggregate, and its history."""
