"""``POST /os-aggregates/{id}/images`` (2.81+), ``/os-image-cache-jobs`` and
Corral's pinned images, ``/os-aggregates/{id}/pinned-images``."""

from rest_framework.response import Response

from aggregates.compute_api.auth import enforce
from aggregates.compute_api.base import ComputeAPIView
from aggregates.compute_api.microversions import APIVersion, ComputeRequest
from aggregates.compute_api.query import MAX_LIMIT, query_params
from aggregates.compute_api.validation import path_int, validate
from aggregates.precache import pins, schemas, serializers, services
from config.public_url import public_base


class AggregateImagesView(ComputeAPIView):
    min_version = APIVersion(2, 81)

    def post(self, request: ComputeRequest, aggregate_id: str) -> Response:
        body = validate(self.body(request), schemas.AGGREGATE_IMAGES)
        caller = enforce(request, "compute:aggregates:images")
        pk = path_int(aggregate_id, f"Invalid aggregate id: {aggregate_id}. The id must be an integer.")
        job = services.request_image_cache(caller, pk, [item["id"] for item in body["cache"]])

        location = f"{public_base(request)}/compute/v2.1/os-image-cache-jobs/{job.uuid}"
        return Response(status=202, headers={"Location": location})


class ImageCacheJobListView(ComputeAPIView):
    def get(self, request: ComputeRequest) -> Response:
        query = query_params(request, schemas.JOB_QUERY)
        enforce(request, "corral:image-cache-jobs:list")
        rows = services.jobs_with_details()
        if "aggregate_id" in query:
            rows = rows.filter(aggregate_id=int(query["aggregate_id"]))
        if "status" in query:
            rows = rows.filter(status=query["status"])
        limit = min(int(query.get("limit", 100)), MAX_LIMIT)
        return Response(serializers.job_list_body(rows[:limit]))


class ImageCacheJobView(ComputeAPIView):
    def get(self, request: ComputeRequest, job_id: str) -> Response:
        enforce(request, "corral:image-cache-jobs:show")
        return Response(serializers.job_body(services.get_job(job_id)))


def _aggregate_pk(aggregate_id: str) -> int:
    return path_int(aggregate_id, f"Invalid aggregate id: {aggregate_id}. The id must be an integer.")


def _board(aggregate_id: int) -> Response:
    return Response(serializers.pinned_images_body(pins.board(aggregate_id)))


class PinnedImagesView(ComputeAPIView):
    def get(self, request: ComputeRequest, aggregate_id: str) -> Response:
        enforce(request, "corral:pinned-images:list")
        return _board(_aggregate_pk(aggregate_id))

    def post(self, request: ComputeRequest, aggregate_id: str) -> Response:
        body = validate(self.body(request), schemas.PIN_IMAGE)["pinned_image"]
        caller = enforce(request, "corral:pinned-images:create")
        pk = _aggregate_pk(aggregate_id)
        pin = pins.pin_image(caller, pk, body["image_id"], body.get("replaces"))
        (row,) = [r for r in pins.board(pk).rows if r.pin.pk == pin.pk]
        return Response({"pinned_image": serializers.pinned_image(row)}, status=201)


class PinnedImageView(ComputeAPIView):
    def get(self, request: ComputeRequest, aggregate_id: str, image_id: str) -> Response:
        enforce(request, "corral:pinned-images:list")
        pin = pins.get_pin(_aggregate_pk(aggregate_id), image_id)
        (row,) = [r for r in pins.board(pin.aggregate_id).rows if r.pin.pk == pin.pk]
        return Response({"pinned_image": serializers.pinned_image(row)})

    def delete(self, request: ComputeRequest, aggregate_id: str, image_id: str) -> Response:
        caller = enforce(request, "corral:pinned-images:delete")
        pins.unpin_image(caller, _aggregate_pk(aggregate_id), image_id)
        return Response(status=204)


class PinnedImagesRecheckView(ComputeAPIView):
    def post(self, request: ComputeRequest, aggregate_id: str) -> Response:
        body = validate(self.body(request), schemas.RECHECK)["recheck"]
        caller = enforce(request, "corral:pinned-images:recheck")
        done = pins.recheck(caller, _aggregate_pk(aggregate_id), body.get("hosts"))
        headers = {}
        if done.job is not None:
            headers["Location"] = f"{public_base(request)}/compute/v2.1/os-image-cache-jobs/{done.job.uuid}"
        return Response(serializers.recheck_body(done), status=202, headers=headers)
