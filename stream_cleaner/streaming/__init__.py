"""The Kafka side of stream-cleaner: topics, records, the Faust worker and its metrics.

Everything here needs the ``stream`` extra (``pip install 'stream-cleaner[stream]'``) and is
imported only by the streaming commands of the CLI: ``import stream_cleaner`` never imports
this package, and this package imports nothing heavy on its own. The cleaning itself stays in
the core (`stream_cleaner.clean_document`); the modules here only move records in and out.
"""
