"""Files LeakLens writes: one atomic writer, and the check that no output lands on an input of the command."""
