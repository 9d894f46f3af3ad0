"""PostgreSQL + pgvector storage: one database shared by any number of memwal-mcp processes.

Imported only when a database URL is configured (store.open_store), so the SQLite path never
loads psycopg. Modules mirror the SQLite backend's, one per concept.
"""
