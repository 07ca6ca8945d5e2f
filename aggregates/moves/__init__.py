"""Moving servers: live migration, cold migration (with confirm) and evacuation, and the migrations API."""
