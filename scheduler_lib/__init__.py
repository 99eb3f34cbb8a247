"""A self-hosted, Azure Scheduler-compatible job scheduler for Azure Functions."""
