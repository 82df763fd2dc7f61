"""The one error type users see (``InputError``) and the helpers that word it; they live with the core
(``servebound.core.errors``), which raises them too, and are named here for every other module."""

from __future__ import annotations

from servebound.core.errors import ECHO_CHARS as ECHO_CHARS
from servebound.core.errors import MAX_ID_CHARS as MAX_ID_CHARS
from servebound.core.errors import InputError as InputError
from servebound.core.errors import check_id_length as check_id_length
from servebound.core.errors import shown as shown
