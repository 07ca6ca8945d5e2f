"""Domain operations of the compute side. Every surface (API, console,
commands, tasks) calls these and nothing else to change data."""
from .aggregates import (  # noqa: F401
    add_host,
    add_hosts,
    availability_zone_of,
    create_aggregate,
    create_aggregate_with_hosts,
    delete_aggregate,
    get_aggregate,
    hosts_of,
    list_aggregates,
    metadata_of,
    remove_host,
    remove_hosts,
    set_metadata,
    update_aggregate,
)
from .exceptions import Conflict, Forbidden, Invalid, NotFound, ServiceError  # noqa: F401
from .hosts import register_host  # noqa: F401,E402
