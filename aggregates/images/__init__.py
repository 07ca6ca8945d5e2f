"""Images: a Glance v2 compatible subset (metadata, properties, tags, data upload and download)."""
