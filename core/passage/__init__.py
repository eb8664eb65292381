"""The single-passage test (the Inspect page and ``python -m core inspect``): one passage scored, placed among
freshly written passages of similar length, its first half given to the model to continue, and one finding.

``run.inspect_passage`` is the one entry both front ends call; the other modules are its steps: ``inspection``
(the passage's own scores), ``calibration`` and ``shipped_calibration`` (the fresh passages' scores, shipped for
the bundled model, else scored once and stored), ``placement`` (where the passage sits among them), ``extraction``
and ``extraction_finding`` (the continuation test), ``verdict`` (both read as one finding), ``summary`` and
``text_form`` (what the placement needs to compare like with like).
"""
