"""The only package that talks to Table storage: collections, jobs, due index, history.

Each module owns one table; `tables.TableStore` holds the clients. Records are plain frozen
dataclasses holding wire JSON, so the domain code never sees storage entities.
"""
