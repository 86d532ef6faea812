"""The `shardc` command line."""
