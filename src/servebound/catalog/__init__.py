"""Catalog data files with a source per number, their schemas and loaders (``catalog.hardware``,
``catalog.models``, ...). Light on purpose: reading a data file of the package (``catalog.data``)
costs no schema import (pydantic)."""
