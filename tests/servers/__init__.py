"""Loopback servers that tests start on 127.0.0.1 instead of patching SDK clients."""
