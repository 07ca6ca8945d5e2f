"""Long jobs that keep a row and survive a worker restart: the row's fields
(``models.LongJob``) and the runner's lease (``leases``). Pre-caching and
host maintenance are such jobs."""
