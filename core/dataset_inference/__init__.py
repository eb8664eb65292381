"""Dataset inference: did the model train on this *set* of texts? A p-value from many weak per-text signals."""
