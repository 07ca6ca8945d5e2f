"""The one table of the placement microversions the client sends: each
operation names its version here, and nowhere else is a version typed."""

# Provider aggregates, read and written: the bodies of 1.19 (they carry the
# provider generation) with error codes (1.23), so that a
# placement.concurrent_update conflict is told apart from other 409s.
AGGREGATES = "1.23"
# Listing providers (member_of, name, in_tree) and deleting one: 1.14 lists
# each provider's parent and root.
PROVIDERS = "1.14"
# Creating a provider: from 1.20 the answer is the provider (its generation).
CREATE_PROVIDER = "1.20"
# Inventories and traits, written: from 1.26 a reservation may equal the total.
INVENTORIES = "1.26"
TRAITS = "1.26"
# What the console reads: a provider (with its parent and root), its
# inventories, usages and traits.
READ = "1.14"
# The reads Corral's own placement serves its in-process client alone
# (placement/internal_urls.py).
INTERNAL_READS = "1.0"
# The providers with room for one resource class among aggregates, some of
# them forbidden (member_of=!in:, from 1.32): why the scheduler's placement
# query left a host out.
PROVIDERS_WITH_ROOM = "1.32"
# Allocation candidates: the scheduler's query, the capacity summaries
# (every class of each provider, from 1.27).
ALLOCATION_CANDIDATES = "1.36"
# Claiming and moving allocations (PUT and POST /allocations with consumer
# generations and consumer types, 1.38), and the read a move starts from.
ALLOCATIONS = "1.38"
# Releasing a consumer's allocations, and reading where they are.
RELEASE = "1.28"
CONSUMER_ALLOCATIONS = "1.28"
# The version document at the root (the health check's probe): every version answers it.
ROOT = "1.0"
