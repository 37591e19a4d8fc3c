"""Application metrics before and after a change: Prometheus range queries, CSV/Parquet files,
one long format (``frame``), windows around the change, and the statistics that judge it."""
