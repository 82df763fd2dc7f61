"""Figures drawn on the server: the pair pages' charts (``charts``) on shared axes (``axes``), the
/economics and /derivation figures, and formulas as MathML (``mathml``)."""
