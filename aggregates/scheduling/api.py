"""``/os-scheduler-explain`` (Corral's own, admin only): why each host would
or would not take a boot now, and the stored explanation of a past decision,
by its id or by the server it placed."""

import uuid
from typing import Any

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.errors import ApiError
from aggregates.compute_api.microversions import ComputeRequest
from aggregates.compute_api.validation import validate
from aggregates.scheduling import schemas
from aggregates.scheduling import services as service
from aggregates.scheduling.models import SchedulingDecision

POLICY = "os_compute_api:os-scheduler-explain"


def explanation_body(decision: SchedulingDecision) -> dict[str, Any]:
    return {
        "explanation": {
            "id": str(decision.uuid),
            "outcome": decision.outcome,
            "created": decision.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "request": decision.request,
            **decision.explanation,
        }
    }


class SchedulerExplainView(ComputeAPIView):
    def post(self, request: ComputeRequest) -> Response:
        body = validate(self.body(request), schemas.EXPLAIN)["explain"]
        caller = enforce(request, POLICY)
        decision = service.explain_request(
            caller,
            flavor_ref=str(body["flavorRef"]),
            image_ref=body.get("imageRef"),
            availability_zone=body.get("availability_zone"),
            project_id=body.get("project_id") or caller.project_id,
            num_instances=body.get("num_instances", 1),
        )
        return Response(explanation_body(decision))


class SchedulingDecisionView(ComputeAPIView):
    def get(self, request: ComputeRequest, decision_id: str) -> Response:
        enforce(request, POLICY)
        try:
            parsed = uuid.UUID(decision_id)
        except ValueError:
            raise ApiError(404, f"Scheduling decision {decision_id} could not be found.") from None
        decision = SchedulingDecision.objects.filter(uuid=parsed).first()
        if decision is None:
            raise ApiError(404, f"Scheduling decision {decision_id} could not be found.")
        return Response(explanation_body(decision))


class ServerDecisionView(ComputeAPIView):
    """GET /os-scheduler-explain/servers/{server_id}: the stored decision of
    the server's last scheduling (the decision a server show's Link names)."""

    def get(self, request: ComputeRequest, server_id: str) -> Response:
        enforce(request, POLICY)
        return Response(explanation_body(service.decision_of_server(server_id)))
