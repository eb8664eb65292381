"""Tests that need only a model's text answers: the ones that run on a hosted chat API."""
