"""Tracker backends shipped with torchx-tracking (see ``torchx.tracker.backend.fsspec``)."""
