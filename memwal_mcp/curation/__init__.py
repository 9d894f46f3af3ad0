"""Curation: the worker that folds remember jobs into memories, and the evaluator it uses."""
