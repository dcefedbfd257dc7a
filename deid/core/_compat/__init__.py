"""The only places in ``deid.core`` that read a dependency's undocumented internals (each pinned by a test)."""
