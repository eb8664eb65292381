"""The audit: one question ("has this model seen this benchmark?") answered by every test that fits the benchmark
and the evidence given, planned before any work (``plan``) and combined into one verdict (``combine``)."""
