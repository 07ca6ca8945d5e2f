"""How gunicorn serves Corral (the web role):

    gunicorn -c config/gunicorn.conf.py

serves config.wsgi on WEB_BIND. Each value below is read from the
environment, with the default given; a command-line option (``-b``,
``-w``) overrides it. docs/deployment.md explains how to size them.

- Workers: WEB_CONCURRENCY processes (gunicorn's own variable), by default
  2 per core plus one, at most 8; each runs WEB_THREADS threads (gthread),
  so a slow client or a long image upload holds a thread, not a process.
- Timeouts: a worker whose main loop is silent for WEB_TIMEOUT seconds is
  killed and replaced (with threads, a long request does not count as
  silence). Kept-alive connections stay open WEB_KEEPALIVE seconds: behind
  a load balancer, set it above the balancer's idle timeout.
- Graceful shutdown: SIGTERM stops accepting connections and lets each
  request in flight finish for up to WEB_GRACEFUL_TIMEOUT seconds; SIGHUP
  starts new workers (new code, new settings) and stops the old ones the
  same way.
- Access log: one line per request on standard output (WEB_ACCESS_LOG, "-"),
  naming the request id Corral answered with (X-OpenStack-Request-ID), the
  id the API's error bodies and the application log carry.
- No preload: each worker imports Corral itself when it starts (config.wsgi
  then imports every route before the worker accepts a request). So SIGHUP
  loads new code, and nothing opened while importing (a database
  connection, a thread) is shared by forked workers; the price is the
  memory of one import per worker.

Web processes never migrate: ``manage.py migrate`` is a step of its own,
run once before the web processes (re)start.
"""

import multiprocessing
import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


wsgi_app = "config.wsgi:application"
bind = [os.environ.get("WEB_BIND", "127.0.0.1:8000")]
proc_name = "corral-web"

workers = _int("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count() + 1, 8))
worker_class = "gthread"
threads = _int("WEB_THREADS", 4)
preload_app = False

timeout = _int("WEB_TIMEOUT", 60)
graceful_timeout = _int("WEB_GRACEFUL_TIMEOUT", 30)
keepalive = _int("WEB_KEEPALIVE", 5)
# Heartbeat files in memory: a worker on a slow or full disk is not taken for a hung one.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

accesslog = os.environ.get("WEB_ACCESS_LOG", "-")
errorlog = "-"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms request_id=%({x-openstack-request-id}o)s "%(a)s"'
# Signals (above) are the interface; no control socket: its default path is
# one per user, so a second server on the machine (serve_demo beside a
# deployment, tests) would take it over.
control_socket_disable = True
