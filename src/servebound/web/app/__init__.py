"""The served app: ``server`` (``create_app``, ``serve``), what the routes share (``state``), the
error shape (``errors``), the HTTP layers, the API's response class, the workload as query parameters
(``query``) and the packaged files read at start (``packaged``)."""
