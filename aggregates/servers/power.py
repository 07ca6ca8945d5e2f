"""A server's power actions as Nova's API shows them: os-stop, os-start and
reboot. There is no hypervisor: a server is a record of its placement claim
on a host, so each is a state transition, done in the request (Nova's
compute host would finish it a moment later). A stopped server keeps its
allocation, as Nova keeps it; a locked one refuses non-admins
(``services.check_unlocked``)."""

from django.db import transaction
from django.utils import timezone

from aggregates.audit import services as events
from aggregates.errors import Conflict, Forbidden
from aggregates.identity.caller import Caller
from aggregates.servers import actions, notifications
from aggregates.servers import services as servers
from aggregates.servers.models import Server

STOP_POLICY = "os_compute_api:servers:stop"
START_POLICY = "os_compute_api:servers:start"
REBOOT_POLICY = "os_compute_api:servers:reboot"
SOFT, HARD = "SOFT", "HARD"
# Nova's vm_states.ALLOW_SOFT_REBOOT and ALLOW_HARD_REBOOT, of the states Corral has.
SOFT_REBOOTABLE = (Server.ACTIVE,)
HARD_REBOOTABLE = (Server.ACTIVE, Server.STOPPED, "paused", "suspended", Server.ERROR)


def _authorize(caller: Caller, rule: str, server: Server) -> None:
    if not caller.may(rule, {"project_id": server.project_id, "user_id": server.user_id}):
        raise Forbidden.by_policy(rule)


def _check_state(server: Server, action: str, vm_states: tuple[str, ...]) -> None:
    """Nova's check_instance_state (no task in progress) and check_instance_host."""
    ref = str(server.uuid)
    if not server.host:
        raise Conflict(f"Instance {ref} is not ready")
    if server.vm_state not in vm_states:
        raise servers.invalid_state(action, ref, "vm_state", server.vm_state)
    if server.task_state is not None:
        raise servers.invalid_state(action, ref, "task_state", server.task_state)


def _transition(caller: Caller, server: Server, name: str, event: str, vm_state: str, power_state: int) -> None:
    now = timezone.now()
    action = actions.start(caller, server, name, now)
    actions.event_start(action, event, host=server.host)
    server.vm_state, server.task_state, server.power_state, server.updated_at = vm_state, None, power_state, now
    server.save(update_fields=["vm_state", "task_state", "power_state", "updated_at"])
    actions.event_finish(action, event, host=server.host)
    actions.finish(action)


def stop_server(caller: Caller, server_uuid: str) -> Server:
    """os-stop: an ACTIVE (or ERROR) server is SHUTOFF (vm_state stopped,
    power_state SHUTDOWN); its allocation stays."""
    with events.failures_recorded(caller, "stop_server", "server", server_uuid):
        with transaction.atomic():
            server = servers.locked_server(caller, server_uuid)
            _authorize(caller, STOP_POLICY, server)
            servers.check_unlocked(caller, server)
            _check_state(server, "stop", (Server.ACTIVE, Server.ERROR))
            _transition(caller, server, actions.STOP, actions.STOP_EVENT, Server.STOPPED, Server.POWER_SHUTDOWN)
            notifications.record(caller, "instance.power_off.end", server, request_id=caller.request_id)
    return server


def start_server(caller: Caller, server_uuid: str) -> Server:
    """os-start: a stopped server is ACTIVE and running again."""
    with events.failures_recorded(caller, "start_server", "server", server_uuid):
        with transaction.atomic():
            server = servers.locked_server(caller, server_uuid)
            _authorize(caller, START_POLICY, server)
            servers.check_unlocked(caller, server)
            _check_state(server, "start", (Server.STOPPED,))
            _transition(caller, server, actions.START, actions.START_EVENT, Server.ACTIVE, Server.POWER_RUNNING)
            notifications.record(caller, "instance.power_on.end", server, request_id=caller.request_id)
    return server


def reboot_server(caller: Caller, server_uuid: str, reboot_type: str) -> Server:
    """reboot: SOFT from ACTIVE; HARD also from stopped or ERROR (a stopped
    server is started, as Nova's hard reboot does); ACTIVE after."""
    reboot_type = reboot_type.upper()
    with events.failures_recorded(caller, "reboot_server", "server", server_uuid):
        with transaction.atomic():
            server = servers.locked_server(caller, server_uuid)
            _authorize(caller, REBOOT_POLICY, server)
            servers.check_unlocked(caller, server)
            _check_state(server, "reboot", SOFT_REBOOTABLE if reboot_type == SOFT else HARD_REBOOTABLE)
            _transition(caller, server, actions.REBOOT, actions.REBOOT_EVENT, Server.ACTIVE, Server.POWER_RUNNING)
            notifications.record(caller, "instance.reboot.end", server, request_id=caller.request_id)
    return server
