"""The site's pages: the registry that lists them (``registry``), what they show (``site``, its records
and words), one typed context per page (``contexts``) and the renderer that builds each page and its
markdown mirror (``renderer``), with the per-page builders beside it."""
