"""Shared test helpers: real local services the suite runs against."""
