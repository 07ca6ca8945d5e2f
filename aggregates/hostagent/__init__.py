"""The host agent: a separate program run on each compute host
(``manage.py run_host_agent``). It registers its host with Corral and
heartbeats, and pre-caches images on Corral's request by streaming them from
Corral's image API into a local cache directory.

It talks to Corral over HTTP only: it imports nothing of Corral's packages
(an import-linter contract in pyproject.toml checks this)."""
