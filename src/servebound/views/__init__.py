"""The views: one result rendered for each surface (human text, JSON, tables, schemas, the site's inputs)."""
