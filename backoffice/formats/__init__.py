"""Date formats of every page: ISO dates, times to the second with their zone (FORMAT_MODULE_PATH)."""
