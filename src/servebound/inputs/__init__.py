"""The input side: what a user states, declared once (``inputs.workload``) and checked at every edge."""
