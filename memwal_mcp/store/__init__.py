"""The store: everything that holds memwal-mcp's data. Backends live in subpackages
(`sqlite/`); nothing outside this package imports a database driver or holds SQL."""
