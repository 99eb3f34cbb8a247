"""The use cases the REST routes and the dashboard share, independent of HTTP: what a
request does. `export` (a job collection as one bundle), `bulk` (one operation on a selection
of a collection's jobs), `resumed` (missed runs when a paused collection resumes)."""
