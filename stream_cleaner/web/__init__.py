"""The web demo and HTTP API: a thin aiohttp layer over `clean_document`.

- `config`: `WebSettings` (limits, models, URL fetching, annotation folders), from flags or
  ``STREAM_CLEANER_WEB_*`` variables.
- `api`: the request handlers, shared by the worker's Faust web server
  (`streaming.views`) and the standalone ``stream-cleaner serve`` (`server`).
- `fetch`: fetching a page by URL, off unless enabled, with address checks.
- ``static/``: the one page (HTML, CSS and JS inlined when served) and the OpenAPI description.

Nothing here cleans: every page goes through `clean_document` with `CleanerSettings`.
"""
