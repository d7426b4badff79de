"""Test suite (a package so helpers such as `tests.servers.chat` can be imported)."""
