"""Passage membership inference: benchmark runs over labelled sets and single-passage inspection."""
