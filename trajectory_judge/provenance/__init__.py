"""Provenance of files: checksums, a data directory's manifest, and the pinned published release."""
