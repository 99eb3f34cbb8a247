"""The API's use cases, below the routes (`api/`) and beside the dashboard: what a request
does, independent of HTTP. Modules: `export` (a job collection as one bundle)."""
