"""The Glance v2 compatible image API, mounted at ``/image``: version
documents, ``/v2/images`` (list, show, create, PATCH, delete, tags) and the
image data (``/v2/images/{id}/file``, upload and download)."""
