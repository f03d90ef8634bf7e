"""torchlint's rules, one module per rule (installed as `torchlint.rules`).

Modules whose names start with `_` hold shared helpers, not rules.
"""
