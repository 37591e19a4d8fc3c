"""Postmortem from evidence alone: what a run folder, a set of them or a bundle says happened."""
