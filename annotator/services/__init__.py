"""Writes of the annotator app, each in a transaction: projects and members, import, export, audit."""
