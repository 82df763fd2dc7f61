"""Pure math: frozen records in, frozen records out. No files, network, printing or logging."""
