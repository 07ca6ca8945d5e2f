"""Host maintenance: drain a host onto its aggregate peers and bring its
servers back, as a job; capacity headroom of an aggregate or a zone."""
