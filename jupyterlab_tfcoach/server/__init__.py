"""jupyter_server side of tfcoach: kernel bootstrap, report history and event bus, REST routes."""
