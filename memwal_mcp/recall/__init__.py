"""Recall: candidate search, duplicate collapse, and the reply format."""
