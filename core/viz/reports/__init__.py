"""The self-contained HTML reports: one module per test (its sections, CSVs, title and intro) beside a short
shell (``shell``) that lays any of them out as one file."""
