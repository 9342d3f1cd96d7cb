"""``python -m stream_cleaner.cli`` runs the command line."""

from . import main

raise SystemExit(main())
