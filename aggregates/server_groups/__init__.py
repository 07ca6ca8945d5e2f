"""Server groups (Nova's os-server-groups): a policy its member servers are
scheduled under (affinity, anti-affinity and their soft forms)."""
