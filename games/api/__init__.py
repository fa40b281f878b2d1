"""The REST API under /api/v1/: thin views that read through games.selectors and write through services."""
