"""Alignment: map launch lines to recipe profiles, compare, plan edits, write PR text."""
