"""The use cases the REST routes and the dashboard share (`bulk`: one operation on a
selection of a collection's jobs)."""
