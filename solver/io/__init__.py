"""Output layer: VTK time series, summary.json, progress, CSV/PNG helpers."""
