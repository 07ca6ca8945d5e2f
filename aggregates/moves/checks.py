"""Nova's checks of a move before anything changes, in Nova's order and
with its messages: the server's states, its host's and the target's
compute services."""

from collections.abc import Iterable

from aggregates.errors import Conflict, Invalid, NotFound
from aggregates.hosts.models import ComputeNode, Service
from aggregates.identity.caller import Caller
from aggregates.moves import states
from aggregates.servers import services as server_services
from aggregates.servers.models import Server


def invalid_state(action: str, server_ref: str, attr: str, state: object) -> Conflict:
    return Conflict(f"Cannot '{action}' instance {server_ref} while it is in {attr} {state}")


def check_state(
    server: Server, action: str, server_ref: str, vm_states: Iterable[str], task_states: Iterable[str | None] = (None,)
) -> None:
    """Nova's check_instance_state: the vm_state, the task_state, launched once."""
    if server.vm_state not in set(vm_states):
        raise invalid_state(action, server_ref, "vm_state", server.vm_state)
    if server.task_state not in set(task_states):
        raise invalid_state(action, server_ref, "task_state", server.task_state)
    if server.launched_at is None:
        raise invalid_state(action, server_ref, "launched_at", None)


def compute_service(host: str | None) -> Service | None:
    if not host:
        return None
    return Service.objects.filter(host=host, binary=Service.COMPUTE).first()


def service_is_up(host: str | None) -> bool:
    service = compute_service(host)
    return service is not None and service.is_up


def host_exists(host: str) -> bool:
    return ComputeNode.objects.filter(host=host).exists()


def locked_server(caller: Caller, server_uuid: str) -> Server:
    server = server_services.get_server(caller, server_uuid)
    return Server.objects.select_for_update().get(pk=server.pk)


def check_move(server: Server, kind: str, server_ref: str, requested_host: str | None) -> None:
    """The checks every move makes before anything changes, in Nova's order
    and with its messages."""
    action = states.ACTION[kind]
    if kind == states.LIVE:
        check_state(server, action, server_ref, (Server.ACTIVE, states.PAUSED))
        if requested_host and not host_exists(requested_host):
            raise Invalid(f"Compute host {requested_host} could not be found.", field="host")
        if not service_is_up(server.host):
            raise Invalid(f"Compute service of {server.host} is unavailable at this time.", field="host")
        if requested_host and requested_host == server.host:
            raise Invalid(f"Unable to migrate instance ({server.uuid}) to current host ({server.host}).", field="host")
    elif kind in (states.COLD, states.RESIZE):
        check_state(server, action, server_ref, (Server.ACTIVE, states.STOPPED))
        if not server.host:
            raise Conflict(f"Instance {server.uuid} is not ready")
        if not service_is_up(server.host):
            raise Conflict("Service is unavailable at this time.")
        if requested_host is not None:
            if requested_host == server.host:
                raise Invalid("Cannot migrate to the host where the server exists.", field="host")
            if not host_exists(requested_host):
                raise Invalid(f"Compute host {requested_host} could not be found.", field="host")
    elif kind == states.EVACUATION:
        if requested_host is not None and compute_service(requested_host) is None:
            raise NotFound(f"Compute host {requested_host} not found.", field="host")
        if server.host == requested_host:
            raise Invalid("The target host can't be the same one.", field="host")
        check_state(server, action, server_ref, (Server.ACTIVE, states.STOPPED, Server.ERROR))
        if service_is_up(server.host):
            raise Invalid(f"Compute service of {server.host} is still in use.", field="host")
    else:
        raise Invalid(f"Unknown move kind {kind}: one of {', '.join(states.KINDS)}.", field="kind")
