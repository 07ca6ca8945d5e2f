"""``/os-server-groups``: create, list (``all_projects`` for admins), show
and delete server groups, as Nova's API answers them."""

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.query import query_params
from aggregates.compute_api.validation import validate
from aggregates.server_groups import schemas, serializers, services

POLICY_ROOT = "os_compute_api:os-server-groups:"


class ServerGroupListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        params = query_params(request, schemas.index_query(request.version))
        caller = enforce(request, POLICY_ROOT + "index")
        limit = int(params["limit"]) if "limit" in params else None
        # Nova's common.limited: at most max_limit (1000) whatever is asked.
        limit = min(limit, 1000) if limit is not None else 1000
        groups = services.list_groups(
            caller,
            all_projects="all_projects" in request.query_params,
            limit=limit,
            offset=int(params.get("offset") or 0),
        )
        return Response(serializers.list_body(groups, request.version))

    def post(self, request: ComputeRequest) -> Response:
        body = validate(self.body(request), schemas.create(request.version))["server_group"]
        caller = enforce(request, POLICY_ROOT + "create")
        if request.version >= (2, 64):
            policy, rules = body["policy"], body.get("rules") or {}
        else:
            policy, rules = body["policies"][0], {}
        rules = {key: int(value) for key, value in rules.items()}
        view = services.create_group(caller, body["name"], policy, rules)
        return Response(serializers.show_body(view, request.version))


class ServerGroupView(ComputeAPIView):
    def get(self, request: ComputeRequest, group_id: str) -> Response:
        query_params(request, schemas.show_query(request.version))
        caller = enforce(request, POLICY_ROOT + "show")
        return Response(serializers.show_body(services.get_group(caller, group_id), request.version))

    def delete(self, request: ComputeRequest, group_id: str) -> Response:
        caller = enforce(request, POLICY_ROOT + "delete")
        services.delete_group(caller, group_id)
        return Response(status=204)
