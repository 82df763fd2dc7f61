"""The site's routes as module-level handlers, one module per job: ``pages`` (HTML pages and their
markdown mirrors), ``machine`` (robots.txt, llms.txt, llms-full.txt, sitemap.xml) and ``api`` (the
JSON API). Each handler receives the app's :class:`servebound.web.app.state.WebState` as a dependency."""
