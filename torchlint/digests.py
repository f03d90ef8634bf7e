"""BLAKE2b, the hash of the result cache and of the project summaries, without `hashlib`:
importing `hashlib` loads OpenSSL's libcrypto for constructors torchlint never calls
(about a twentieth of a one-file check whose result is cached), and its `blake2b` is
this one."""

try:
    from _blake2 import blake2b
except ImportError:  # a Python built without it: OpenSSL's, through hashlib
    from hashlib import blake2b

__all__ = ["blake2b"]
