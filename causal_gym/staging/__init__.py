"""Staging: messiness, naming, CSV bytes, README."""
