"""``/servers``: create, list (brief and detailed), show, update and
delete; a server's metadata and tags."""

import secrets
import string
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from django.utils.dateparse import parse_datetime
from rest_framework.response import Response

from aggregates.addressing import serializers as address_views
from aggregates.addressing import services as addressing
from aggregates.compute_api.auth import caller_of, enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import MAX_LIMIT, query_params
from aggregates.compute_api.validation import validate
from aggregates.identity.caller import Caller
from aggregates.servers import metadata, power, schemas, serializers, tags, usage
from aggregates.servers import services as service

TRUE = {"1", "t", "true", "on", "y", "yes"}
FALSE = {"0", "f", "false", "off", "n", "no"}


def _strict_bool(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    raise ApiError(
        400,
        f"Invalid input received: Unrecognized value '{value}' for {name}, acceptable values are: "
        "'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
    )


def _allowed_filters(version: tuple[int, int]) -> set[str]:
    """The filters a non-admin may use (Nova strips the others silently)."""
    allowed = {"reservation_id", "name", "status", "image", "flavor", "ip", "changes-since", "all_tenants"}
    if version >= (2, 5):
        allowed.add("ip6")
    if version >= (2, 26):
        allowed |= {"tags", "tags-any", "not-tags", "not-tags-any"}
    if version >= (2, 66):
        allowed.add("changes-before")
    if version >= (2, 73):
        allowed.add("locked")
    if version >= (2, 83):
        allowed |= {
            "availability_zone",
            "config_drive",
            "key_name",
            "created_at",
            "launched_at",
            "terminated_at",
            "power_state",
            "task_state",
            "vm_state",
            "progress",
            "user_id",
        }
    if version >= (2, 90):
        allowed.add("hostname")
    return allowed


def _time(name: str, value: str) -> datetime:
    parsed = parse_datetime(value) if value else None
    if parsed is None:
        raise ApiError(400, f"Invalid filter field: {name}.")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _server_query(request: ComputeRequest, caller: Caller) -> service.ServerQuery:
    version = request.version
    params = query_params(request, schemas.server_list_query(version))
    for name in request.query_params:
        if name in schemas.JOINED_TABLE_PARAMS or name.startswith("_"):
            raise ApiError(400, f"Invalid filter field: {name}.")
    if not service.sees_all_servers(caller):
        allowed = _allowed_filters(version) | {"limit", "marker", "sort_key", "sort_dir"}
        params = {name: value for name, value in params.items() if name in allowed}
    query = service.ServerQuery()
    if "all_tenants" in params:
        # Nova's is_all_tenants: given without a value, it asks for every project.
        value = params["all_tenants"]
        query.all_tenants = value == "" or _strict_bool("all_tenants", value)
    query.project_id = params.get("project_id") or params.get("tenant_id")
    query.name = params.get("name", params.get("display_name"))
    if "status" in params:
        query.statuses = request.query_params.getlist("status")
        if version < (2, 38) and not any(status.upper() in service.KNOWN_STATUSES for status in query.statuses):
            query.statuses = ["SHUTOFF"]  # Nova before 2.38: an unknown status lists nothing
    query.host = params.get("host")
    query.node = params.get("node")
    query.availability_zone = params.get("availability_zone")
    query.reservation_id = params.get("reservation_id")
    query.image = params.get("image", params.get("image_ref"))
    query.flavor = params.get("flavor")
    query.uuid = params.get("uuid")
    if "locked" in params:
        query.locked = _strict_bool("locked", params["locked"])
    if "deleted" in params:
        query.deleted = params["deleted"].strip().lower() in TRUE
    if "changes-since" in params:
        query.changes_since = _time("changes-since", params["changes-since"])
    if "changes-before" in params:
        query.changes_before = _time("changes-before", params["changes-before"])
        if query.changes_since and query.changes_before < query.changes_since:
            raise ApiError(400, "The value of changes-since must be less than or equal to changes-before.")
    if "limit" in params:
        query.limit = int(params["limit"])
    query.marker = params.get("marker")
    for name in ("tags", "tags-any", "not-tags", "not-tags-any"):
        if name in params:  # comma-separated, as Nova splits them
            setattr(query, name.replace("-", "_"), [tag for tag in params[name].split(",") if tag])
    return query


def _list(request: ComputeRequest, detail: bool) -> Response:
    caller = caller_of(request)
    query = _server_query(request, caller)
    servers = service.list_servers(caller, query, max_limit=MAX_LIMIT, detail=detail)
    return Response(serializers.server_list_body(request, servers, caller, detail, query.limit, MAX_LIMIT))


def _password() -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(12))


class ServerListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        return _list(request, detail=False)

    def post(self, request: ComputeRequest) -> Response:
        version = request.version
        body = validate(self.body(request), schemas.server_create(version))
        server = body["server"]
        caller = enforce(request, "os_compute_api:servers:create")
        if server.get("block_device_mapping") and server.get("block_device_mapping_v2"):
            raise ApiError(400, "Using different block_device_mapping syntaxes is not allowed in the same request.")
        hints = body.get("os:scheduler_hints", body.get("OS-SCH-HNT:scheduler_hints")) or {}
        description = server.get("description") if version >= (2, 19) else server["name"]
        created = service.create_servers(
            caller,
            name=server["name"],
            flavor_ref=server["flavorRef"],
            image_ref=server.get("imageRef") or "",
            availability_zone=server.get("availability_zone"),
            min_count=server.get("min_count"),
            max_count=server.get("max_count"),
            metadata=server.get("metadata"),
            description=description,
            block_devices=server.get("block_device_mapping_v2") or server.get("block_device_mapping") or [],
            networks=server.get("networks"),
            scheduler_hints=hints,
            requested_host=server.get("host") if version >= (2, 74) else None,
            requested_node=server.get("hypervisor_hostname") if version >= (2, 74) else None,
            trusted_image_certificates=server.get("trusted_image_certificates") if version >= (2, 63) else None,
            tags=server.get("tags") or () if version >= (2, 52) else (),
            key_name=server.get("key_name"),
            access_ip_v4=server.get("accessIPv4"),
            access_ip_v6=server.get("accessIPv6"),
            config_drive=server.get("config_drive"),
            hostname=server.get("hostname") if version >= (2, 90) else None,
        )
        if server.get("return_reservation_id") is not None and str(server["return_reservation_id"]).lower() in TRUE:
            return Response(serializers.reservation_body(created), status=202)
        password = server.get("adminPass") or _password()
        body = serializers.create_body(request, created, server.get("security_groups"), password)
        location = body["server"]["links"][0]["href"]
        return Response(body, status=202, headers={"Location": location})


class ServerDetailListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        return _list(request, detail=True)


class ServerView(ComputeAPIView):
    def get(self, request: ComputeRequest, server_id: str) -> Response:
        query_params(request, schemas.server_show_query(request.version))
        caller = caller_of(request)
        server = service.get_server(caller, server_id)
        link = serializers.decision_link(request, server, caller)
        return Response(serializers.server_body(request, server, caller), headers={"Link": link} if link else None)

    def put(self, request: ComputeRequest, server_id: str) -> Response:
        body = validate(self.body(request), schemas.server_update(request.version))["server"]
        fields = {
            "name": "name",
            "description": "description",
            "hostname": "hostname",
            "accessIPv4": "access_ip_v4",
            "accessIPv6": "access_ip_v6",
            "pinned_availability_zone": "pinned_availability_zone",
        }
        changes = {field: body[key] for key, field in fields.items() if key in body}
        caller = enforce(request, "os_compute_api:servers:update")
        server = service.update_server(caller, server_id, changes)
        return Response(serializers.update_body(request, server, caller))

    def delete(self, request: ComputeRequest, server_id: str) -> Response:
        service.delete_server(enforce(request, "os_compute_api:servers:delete"), server_id)
        return Response(status=204)


def reset_state(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    state = validate(body, schemas.RESET_STATE)["os-resetState"]["state"]
    service.reset_state(caller_of(request), server_id, state)
    return Response(status=202)


def force_delete(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    validate(body, schemas.FORCE_DELETE)
    service.force_delete_server(caller_of(request), server_id)
    return Response(status=202)


def restore(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    validate(body, schemas.RESTORE)
    service.restore_server(caller_of(request), server_id)
    return Response(status=202)


def lock(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    arguments = validate(body, schemas.lock_schema(request.version))["lock"]
    reason = arguments.get("locked_reason") if request.version >= (2, 73) and arguments else None
    service.lock_server(caller_of(request), server_id, reason)
    return Response(status=202)


def unlock(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    validate(body, schemas.UNLOCK)
    service.unlock_server(caller_of(request), server_id)
    return Response(status=202)


def start(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    validate(body, schemas.START)
    power.start_server(caller_of(request), server_id)
    return Response(status=202)


def stop(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    validate(body, schemas.STOP)
    power.stop_server(caller_of(request), server_id)
    return Response(status=202)


def reboot(request: ComputeRequest, server_id: str, body: dict[str, Any]) -> Response:
    reboot_type = validate(body, schemas.REBOOT)["reboot"]["type"]
    power.reboot_server(caller_of(request), server_id, reboot_type)
    return Response(status=202)


# The server actions of servers themselves, by the body's key (the routes
# table gives them, with the moves', to ServerActionView).
ACTIONS = {
    "os-resetState": reset_state,
    "forceDelete": force_delete,
    "restore": restore,
    "lock": lock,
    "unlock": unlock,
    "os-start": start,
    "os-stop": stop,
    "reboot": reboot,
}


# A server action's handler: (request, server id, body) -> the response.
ServerAction = Callable[[ComputeRequest, str, dict[str, Any]], Response]


class ServerActionView(ComputeAPIView):
    """POST /servers/{id}/action: Nova's dispatch on the body's one key.
    The routes table (config/compute_urls.py) gives its ``handlers``: server
    actions by that key, each to its domain's handler (request, server_id,
    body) -> Response."""

    handlers: Mapping[str, ServerAction] = {}

    def post(self, request: ComputeRequest, server_id: str) -> Response:
        body = self.body(request)
        if not isinstance(body, dict) or len(body) != 1:
            raise ApiError(400, "Malformed request body")
        action = next(iter(body))
        handler = self.handlers.get(action)
        if handler is None:
            raise ApiError(400, f"There is no such action: {action}")
        return handler(request, server_id, body)


# --- the server password ------------------------------------------------------------------


class ServerPasswordView(ComputeAPIView):
    """GET and DELETE /servers/{id}/os-server-password."""

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        query_params(request, schemas.server_show_query(request.version))
        return Response({"password": service.server_password(caller_of(request), server_id)})

    def delete(self, request: ComputeRequest, server_id: str) -> Response:
        service.clear_server_password(caller_of(request), server_id)
        return Response(status=204)


# --- metadata ---------------------------------------------------------------------------


class ServerMetadataView(ComputeAPIView):
    """GET, POST (merge) and PUT (replace) /servers/{id}/metadata."""

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        query_params(request, schemas.server_show_query(request.version))
        return Response({"metadata": metadata.get_metadata(caller_of(request), server_id)})

    def post(self, request: ComputeRequest, server_id: str) -> Response:
        body = validate(self.body(request), schemas.METADATA)
        return Response({"metadata": metadata.update_metadata(caller_of(request), server_id, body["metadata"])})

    def put(self, request: ComputeRequest, server_id: str) -> Response:
        body = validate(self.body(request), schemas.METADATA)
        new = metadata.update_metadata(caller_of(request), server_id, body["metadata"], replace=True)
        return Response({"metadata": new})


class ServerMetadataItemView(ComputeAPIView):
    """GET, PUT and DELETE /servers/{id}/metadata/{key}."""

    def get(self, request: ComputeRequest, server_id: str, key: str) -> Response:
        query_params(request, schemas.server_show_query(request.version))
        return Response({"meta": {key: metadata.get_item(caller_of(request), server_id, key)}})

    def put(self, request: ComputeRequest, server_id: str, key: str) -> Response:
        body = validate(self.body(request), schemas.METADATA_ITEM)
        return Response({"meta": metadata.set_item(caller_of(request), server_id, key, body["meta"])})

    def delete(self, request: ComputeRequest, server_id: str, key: str) -> Response:
        metadata.delete_item(caller_of(request), server_id, key)
        return Response(status=204)


# --- tags (2.26) -------------------------------------------------------------------------


class ServerTagListView(ComputeAPIView):
    """GET, PUT (replace all) and DELETE (all) /servers/{id}/tags."""

    min_version = (2, 26)

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        query_params(request, schemas.server_show_query(request.version))
        return Response({"tags": tags.list_tags(caller_of(request), server_id)})

    def put(self, request: ComputeRequest, server_id: str) -> Response:
        body = validate(self.body(request), schemas.TAGS)
        return Response({"tags": tags.replace_tags(caller_of(request), server_id, body["tags"])})

    def delete(self, request: ComputeRequest, server_id: str) -> Response:
        tags.delete_tags(caller_of(request), server_id)
        return Response(status=204)


class ServerTagView(ComputeAPIView):
    """GET (204 or 404), PUT (201 added, 204 there already) and DELETE /servers/{id}/tags/{tag}."""

    min_version = (2, 26)

    def get(self, request: ComputeRequest, server_id: str, tag: str) -> Response:
        query_params(request, schemas.server_show_query(request.version))
        tags.has_tag(caller_of(request), server_id, tag)
        return Response(status=204)

    def put(self, request: ComputeRequest, server_id: str, tag: str) -> Response:
        if request._request.body.strip():
            validate(request.data, schemas.TAG_BODY)
        if not tags.add_tag(caller_of(request), server_id, tag):
            return Response(status=204)
        location = f"{serializers.server_links(request, uuid.UUID(server_id))[0]['href']}/tags/{tag}"
        return Response(status=201, headers={"Location": location})

    def delete(self, request: ComputeRequest, server_id: str, tag: str) -> Response:
        tags.delete_tag(caller_of(request), server_id, tag)
        return Response(status=204)


# --- instance actions ---------------------------------------------------------------------


def _query_time(name: str, value: str) -> datetime:
    parsed = parse_datetime(value) if value else None
    if parsed is None:
        raise ApiError(
            400, f"Invalid input for query parameters {name}. Value: {value}. '{value}' is not a 'date-time'"
        )
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class InstanceActionListView(ComputeAPIView):
    """GET /servers/{id}/os-instance-actions (deleted servers from 2.21; paging from 2.58)."""

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        version = request.version
        params = query_params(request, schemas.instance_actions_query(version))
        query = service.ActionQuery(include_deleted=version >= (2, 21))
        if version >= (2, 58):
            if "limit" in params:
                query.limit = int(params["limit"])
            query.marker = params.get("marker")
            if "changes-since" in params:
                query.changes_since = _query_time("changes-since", params["changes-since"])
            if "changes-before" in params:
                query.changes_before = _query_time("changes-before", params["changes-before"])
                if query.changes_since and query.changes_before < query.changes_since:
                    raise ApiError(400, "The value of changes-since must be less than or equal to changes-before.")
        actions = service.list_actions(caller_of(request), server_id, query, max_limit=MAX_LIMIT)
        return Response(serializers.action_list_body(request, server_id, actions, query.limit, MAX_LIMIT))


class InstanceActionView(ComputeAPIView):
    """GET /servers/{id}/os-instance-actions/{request_id}."""

    def get(self, request: ComputeRequest, server_id: str, request_id: str) -> Response:
        query_params(request, schemas.server_show_query(request.version))
        caller = caller_of(request)
        action = service.get_action(caller, server_id, request_id, include_deleted=request.version >= (2, 21))
        return Response(serializers.action_body(request, action, caller))


# --- usage ---------------------------------------------------------------------------------


def _usage_page(request: ComputeRequest, params: Mapping[str, str]) -> tuple[int, str | None]:
    """Nova's limit (at most MAX_LIMIT) and marker from 2.40; before, every server."""
    if request.version < (2, 40):
        return MAX_LIMIT, None
    limit = min(int(params["limit"]), MAX_LIMIT) if "limit" in params else MAX_LIMIT
    return limit, params.get("marker")


def _first(request: ComputeRequest, name: str) -> str | None:
    """The first value of a parameter, as Nova reads start, end and detailed."""
    values = request.query_params.getlist(name)
    return values[0] if values else None


class TenantUsageListView(ComputeAPIView):
    """GET /os-simple-tenant-usage: every project's usage (admins)."""

    def get(self, request: ComputeRequest) -> Response:
        params = query_params(request, schemas.tenant_usage_query(request.version))
        limit, marker = _usage_page(request, params)
        found = usage.tenant_usage(
            caller_of(request), _first(request, "start"), _first(request, "end"), None, limit, marker
        )
        detailed = _first(request, "detailed") == "1"
        return Response(serializers.tenant_usages_body(request, found, detailed, MAX_LIMIT))


class TenantUsageView(ComputeAPIView):
    """GET /os-simple-tenant-usage/{tenant_id}: one project's usage (admins and its own users)."""

    def get(self, request: ComputeRequest, tenant_id: str) -> Response:
        params = query_params(request, schemas.tenant_usage_query(request.version, show=True))
        limit, marker = _usage_page(request, params)
        caller = caller_of(request)
        found = usage.tenant_usage(caller, _first(request, "start"), _first(request, "end"), tenant_id, limit, marker)
        return Response(serializers.tenant_usage_body(request, found, tenant_id, MAX_LIMIT))


class AuditLogListView(ComputeAPIView):
    """GET /os-instance_usage_audit_log: the last completed audit period (admins)."""

    def get(self, request: ComputeRequest) -> Response:
        query_params(request, schemas.audit_log_query(request.version))
        log = usage.audit_log(caller_of(request))
        return Response({"instance_usage_audit_logs": serializers.audit_log_body(log)})


class AuditLogView(ComputeAPIView):
    """GET /os-instance_usage_audit_log/{before_timestamp}: the period completed before it (admins)."""

    def get(self, request: ComputeRequest, before: str) -> Response:
        query_params(request, schemas.audit_log_query(request.version))
        caller = caller_of(request)
        usage.check_audit_policy(caller, show=True)
        form = "%Y-%m-%d %H:%M:%S.%f" if "." in before else "%Y-%m-%d %H:%M:%S"
        try:
            moment = datetime.strptime(before, form)
        except ValueError:
            raise ApiError(400, f"Invalid timestamp for date {before}") from None
        log = usage.audit_log(caller, moment, show=True)
        return Response({"instance_usage_audit_log": serializers.audit_log_body(log)})


# --- a server's addresses (Nova's ips) ----------------------------------------------


class ServerIpsView(ComputeAPIView):
    """GET /servers/{id}/ips: the server's addresses by network (Nova's ips index)."""

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        server = service.get_server(caller_of(request), server_id)
        return Response({"addresses": address_views.basic(addressing.addresses_of(server))})


class ServerIpsNetworkView(ComputeAPIView):
    """GET /servers/{id}/ips/{network}: the addresses on one network, Nova's 404 otherwise."""

    def get(self, request: ComputeRequest, server_id: str, network: str) -> Response:
        server = service.get_server(caller_of(request), server_id)
        addresses = address_views.basic(addressing.addresses_of(server))
        if network not in addresses:
            raise ApiError(404, "Instance is not a member of specified network")
        return Response({network: addresses[network]})


class ServerSecurityGroupsView(ComputeAPIView):
    """GET /servers/{id}/os-security-groups: Nova's list of the server's
    security groups; Corral has none, so it is empty (Ansible's
    openstack.cloud.server reads it to decide whether anything changed)."""

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        service.get_server(caller_of(request), server_id)
        return Response({"security_groups": []})
