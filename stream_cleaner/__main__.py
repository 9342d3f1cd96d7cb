"""``python -m stream_cleaner`` runs the command line."""

from .cli import main

raise SystemExit(main())
