"""torchlint's runtime probe (installed as `torchlint.runtime_probe`); needs torch."""
