"""The one expensive step and what feeds it: model loading, batched scoring into token records, generation,
extra passes."""
