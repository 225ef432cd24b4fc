"""Replicate functions of the book's Monte Carlo studies, one module per chapter."""
