"""servebound: how fast can this machine serve this LLM? Ceilings from first principles."""
