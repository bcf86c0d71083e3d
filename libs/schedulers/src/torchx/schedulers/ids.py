"""The one way every scheduler makes app ids: ``<name>-<random suffix>``.

The suffix is lowercase letters and digits and starts with a letter, so an id made from a
DNS-label name is itself a valid Kubernetes object name, Docker container name, Slurm job
name and directory name.
"""

from __future__ import annotations

import base64
import os
import string

DEFAULT_SUFFIX_LENGTH = 12
# The characters a suffix starts with, and those that may follow (base32's alphabet).
START_CANDIDATES = string.ascii_lowercase
END_CANDIDATES = string.ascii_lowercase + "234567"


def random_id(length: int = DEFAULT_SUFFIX_LENGTH) -> str:
    """``length`` random characters from ``[a-z2-7]``, the first one a letter."""
    if length < 1:
        raise ValueError(f"random_id: length must be >= 1, got {length}")
    first = string.ascii_lowercase[os.urandom(1)[0] % 26]
    if length == 1:
        return first
    # Base32 keeps 5 random bits per character with no modulo bias.
    rest = base64.b32encode(os.urandom((5 * (length - 1) + 7) // 8)).decode().lower()
    return first + rest[: length - 1]


def random_uint64() -> int:
    """A random unsigned 64-bit integer from the operating system's generator."""
    return int.from_bytes(os.urandom(8), "big")


def get_len_random_id(string_length: int) -> str:
    """A random suffix of exactly ``string_length`` characters (see :func:`random_id`)."""
    return random_id(string_length)


def make_unique(name: str, string_length: int = 0) -> str:
    """``name`` followed by ``-`` and a random suffix (``string_length`` characters, or
    the default length when 0)."""
    return f"{name}-{random_id(string_length or DEFAULT_SUFFIX_LENGTH)}"


__all__ = [
    "DEFAULT_SUFFIX_LENGTH",
    "END_CANDIDATES",
    "START_CANDIDATES",
    "get_len_random_id",
    "make_unique",
    "random_id",
    "random_uint64",
]
