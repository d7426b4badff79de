"""rlm-docs as a component for other tools: runs for network callers (`runs`, no web stack
needed), the OpenAI wire format (`wire`) and the FastAPI app of `rlm-docs serve` (`app`, needs
the `serve` extra). `rlm-docs mcp` (`rlm_docs.mcp_server`) reuses `runs` and `wire`."""
