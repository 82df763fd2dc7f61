"""The static export: the site written as files (``build``), its relative links (``links``), the
writing over worker processes (``write``) and the static copy's calculator page (``calculator``)."""
