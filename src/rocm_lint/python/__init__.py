"""The Python analyser: stdlib ``ast`` plus gate analysis. Never LibCST, never torch."""
